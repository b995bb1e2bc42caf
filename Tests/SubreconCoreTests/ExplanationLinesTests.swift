import Foundation
import SubreconCore
import Testing

@Suite("explain shows each purchase line: its keys, who spoke, whose it is and why (CONTRACT 'Commands', 'Whose purchase it is')")
struct ExplanationLinesTests {
    @Test("RevenueCat's entry and the store's fact about one line are one line; a linked token and a foreign buyer say so")
    func lines() throws {
        var row = lineRow(source: "google_iap", ids: [.googlePlay: "tok-old"])
        row.links = [.googlePlay: "tok-new"]
        var newer = storeFact(.googlePlay, lookup: "tok-new", order: "GPA.2..0", expires: 30, state: .active)
        newer.aliases = ["tok-old"]
        newer.purchase.buyer = .stated("u1", store: .playStore)
        var foreign = storeFact(.appStore, "premium_monthly", lookup: "1000", expires: 30, state: .active, otid: "1000")
        foreign.purchase.buyer = .stated("acct-other", store: .appStore)
        var facts = SourceFacts(
            revenueCatKnowsSubscriber: true, revenueCatPurchases: [rcEntry(txn: "GPA.2..1", expires: 30)], stores: [newer, foreign])
        facts.asked = [.revenueCat, .googlePlay, .appStore]
        let verdict = Decision.decide(row: row, facts: facts, context: context)
        #expect(verdict.drift == [.ownershipConflict])
        let explanation = Explanation(row: row, facts: facts, context: context, verdict: verdict)
        #expect(explanation.lines.count == 2)
        let google = try #require(explanation.lines.first { $0.store == "play_store" })
        #expect(google.keys.contains("tok-new") && google.keys.contains("tok-old") && google.keys.contains("GPA.2"))
        #expect(google.sources == ["revenuecat", "google_play"])
        #expect(google.owner.contains("names the buyer's account u1"))
        #expect(google.standing == "stale")
        let apple = try #require(explanation.lines.first { $0.store == "app_store" })
        #expect(apple.standing == "conflict")
        #expect(apple.owner.hasPrefix("another buyer"))
        #expect(explanation.text.contains { $0.contains("purchase lines:") })
        let json = String(decoding: try explanation.jsonData(), as: UTF8.self)
        #expect(json.contains("\"lines\""))
    }
}
