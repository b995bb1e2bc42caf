import Foundation
import SubreconCore
import Testing

/// A verdict's error is a value: its kind and data survive the ledger's JSON, text is made only when printed, and a
/// ledger row an earlier version wrote (the error as a string) still reads back.
@Suite("Verdict problems are values")
struct VerdictProblemTests {
    static let transfer = LineTransfer(origin: .appStore, identifier: "5100", owner: "t1-b", holders: ["t1-a"])
    static let problems: [Verdict.Problem] = [
        .sourceErrors([.init(origin: .revenueCat, message: "HTTP 500"), .init(origin: .stripe, message: "a, b; c")]),
        .unknownAtSource(asked: [.revenueCat, .appStore], unknownTo: [.appStore], lineTier: nil),
        .unknownAtSource(asked: [], unknownTo: [], lineTier: 2),
        .unnamedEntitlement("premium"),
        .missingProducts(["com.example,annual", "plain"]),
        .undecidable(origin: .googlePlay, productID: "p", reason: "a subscription without a stated expiry date"),
        .ownership(["revenuecat: one", "apple: two"]),
        .ownedElsewhere([transfer]),
        .unreadableRow("updated_at is infinity"),
        .unreadableRow(nil),
        .earlierText("an earlier version's sentence"),
    ]

    @Test("every kind round-trips through JSON with its data", arguments: problems)
    func roundTrip(_ problem: Verdict.Problem) throws {
        let data = try JSONEncoder().encode(problem)
        #expect(try JSONDecoder().decode(Verdict.Problem.self, from: data) == problem)
    }

    @Test("a product id holding commas stays one product: the list is the data, the sentence only its rendering")
    func commasStayInTheList() throws {
        let problem = Verdict.Problem.missingProducts(["com.example,annual", "plain"])
        var verdict = Verdict(
            row: UserRow(id: "u", currentTier: 1, status: "active"), truth: nil, action: .skipped, drift: [.unknownProduct])
        verdict.error = problem
        let back = try JSONDecoder().decode(Verdict.self, from: try JSONEncoder().encode(verdict))
        #expect(back.missingProducts == ["com.example,annual", "plain"])
        #expect(problem.description == "entitled product(s) missing from product_tiers: com.example,annual, plain")
        #expect(Verdict.Problem.unnamedEntitlement("x").missingProducts == nil)
    }

    @Test("a ledger row an earlier version wrote, with the error as a string, reads back as that text")
    func earlierLedgerText() throws {
        let json = Data(#""revenuecat: HTTP 500; row left as it was""#.utf8)
        let problem = try JSONDecoder().decode(Verdict.Problem.self, from: json)
        #expect(problem == .earlierText("revenuecat: HTTP 500; row left as it was"))
        #expect(problem.description == "revenuecat: HTTP 500; row left as it was")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Verdict.Problem.self, from: Data(#"{"kind": "nonsense"}"#.utf8)) }
    }

    @Test("the sentences an operator reads")
    func sentences() {
        #expect(
            Verdict.Problem.sourceErrors([.init(origin: .revenueCat, message: "HTTP 500")]).description == "revenuecat: HTTP 500")
        #expect(
            Verdict.Problem.unknownAtSource(asked: [.revenueCat], unknownTo: [], lineTier: 1).description
                == "subscriber unknown to RevenueCat (new or empty); no source authoritative for the line that granted tier 1 "
                + "stated its end; row left as it was")
        #expect(
            Verdict.Problem.ownedElsewhere([Self.transfer]).description
                == "revenuecat lists purchase 5100 (app_store) under user t1-b: the line is theirs (a transfer or a restore on "
                + "another account); row left as it was")
    }
}
