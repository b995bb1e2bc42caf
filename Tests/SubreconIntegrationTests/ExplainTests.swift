import Foundation
import PostgresNIO
import StoreSimulator
import SubreconApp
import SubreconCore
import SubreconDatabase
import SubreconJob
import SubreconPorts
import Testing

/// `subrecon explain USER_ID` (CONTRACT "Commands"): asks every configured source as a run would, changes nothing.
@Suite("subrecon explain", .serialized, .enabled(if: Harness.isEnabled, Harness.skip), .timeLimit(.minutes(3)))
struct ExplainTests {
    @Test("explains each source's evidence, the verdict and the rule behind every drift kind, and changes nothing")
    func explainsWithoutChanging() async throws {
        try await Harness.with(apple: true) { h in
            try await h.seed(h.row("e-apple", tier: 1, "active", end: -3, txn: "6001"), Harness.subscription(expires: -3, txn: "6001"))
            await h.appStore.setScenario(
                AppStoreScenario(
                    originalTransactionID: "6001", transactionID: "6101", productID: "premium_monthly", status: 1,
                    purchaseDate: Harness.day(-3), expiresDate: Harness.day(27)))
            let before = try await h.user("e-apple")
            let explanation = try await Commands.explain(environment: h.env, userID: "e-apple", asOf: Harness.asOf, logger: h.logger)
            #expect(explanation.sources.map(\.source) == ["revenuecat", "app_store"])
            #expect(explanation.action == "extend")
            #expect(explanation.drift == ["missed_renewal", "source_conflict"])
            let apple = try #require(explanation.sources.last)
            #expect(apple.outcome == "answered" && apple.purchases.first?.signature?.hasPrefix("verified") == true)
            #expect(
                apple.purchases.first?.signature?.contains("signed by O=subrecon test PKI,CN=subrecon simulator Receipt Signing") == true,
                "the leaf's subject is named: \(apple.purchases.first?.signature ?? "")")
            #expect(apple.purchases.first?.judged.hasPrefix("entitled (active) until") == true)
            let revenueCat = try #require(explanation.sources.first)
            #expect(revenueCat.purchases.first?.judged == "not entitled (expired)")
            #expect(Set(explanation.rules.map(\.about)) == ["action:extend", "drift:missed_renewal", "drift:source_conflict"])
            #expect(explanation.rules.allSatisfy { !$0.rule.isEmpty })
            #expect(try await h.user("e-apple") == before, "explain changes nothing")
            #expect(try await h.count("select count(*)::int from reconcile_runs") == 0)
            #expect(try await h.count("select count(*)::int from push_intents") == 0)
            #expect(!explanation.sourceErrored)
        }
    }

    @Test("the binary: --json prints exactly one JSON document on stdout; 1 when a source errored, 66 without a row")
    func binary() async throws {
        try await Harness.with { h in
            try await h.seed(h.row("e-ok", tier: 1, "active", end: -3), Harness.subscription(expires: 27))
            try await h.seed(h.row("e-fault", tier: 1, "active", end: -3), Harness.subscription(expires: 27))
            await h.revenueCat.setFault(.status(500), for: "e-fault")
            func explain(_ id: String) async throws -> (Int32?, Data) {
                let (process, err) = try SubreconBinary.start(
                    ["explain", id, "--as-of", ISO8601.string(Harness.asOf), "--json"], environment: h.env.values,
                    directory: h.reportDirectory)
                let status = try await SubreconBinary.wait(process, limit: .seconds(60))
                let out = err.deletingLastPathComponent().appendingPathComponent(
                    err.lastPathComponent.replacingOccurrences(of: "stderr-", with: "stdout-"))
                return (status, try Data(contentsOf: out))
            }
            let (ok, okOut) = try await explain("e-ok")
            #expect(ok == 0)
            let document = try JSONSerialization.jsonObject(with: okOut) as? [String: Any]
            #expect(document?["action"] as? String == "extend")
            #expect((document?["sources"] as? [[String: Any]])?.first?["source"] as? String == "revenuecat")

            let (fault, faultOut) = try await explain("e-fault")
            #expect(fault == 1)
            let faultDocument = try JSONSerialization.jsonObject(with: faultOut) as? [String: Any]
            #expect(faultDocument?["drift"] as? [String] == ["fetch_error"])

            let (missing, _) = try await explain("nobody")
            #expect(missing == 66)
            #expect(try await h.user("e-ok")?.endDate == Harness.day(-3), "nothing written")
        }
    }
}
