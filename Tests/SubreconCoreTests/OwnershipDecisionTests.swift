import Foundation
import SubreconCore
import Testing

/// A store fact stating the buyer's account.
private func owned(_ fact: StoreFact, by account: String?) -> StoreFact {
    var fact = fact
    fact.purchase.buyer = .stated(account, store: fact.purchase.store)
    return fact
}

@Suite("Whose purchase it is: ownership, linking and stale identifiers (CONTRACT 'Whose purchase it is')")
struct OwnershipDecisionTests {
    let appleUUID = "6f1c1e0a-2b9d-4c1e-9a55-0f6f3d1c2b7a"

    @Test("a store naming another buyer leaves the row untouched, ownership_conflict, whatever RevenueCat says")
    func foreignOwnerIsAConflict() {
        let row = lineRow(source: "google_iap", ids: [.googlePlay: "tok-1"])
        let fact = owned(storeFact(.googlePlay, lookup: "tok-1", expires: 30, state: .active), by: "someone-else")
        let facts = SourceFacts(
            revenueCatKnowsSubscriber: true, revenueCatPurchases: [rcEntry(txn: "GPA.1..0", expires: 30)], stores: [fact])
        let verdict = Decision.decide(row: row, facts: facts, context: context)
        #expect(verdict.action == .skipped)
        #expect(verdict.drift == [.ownershipConflict])
        #expect(verdict.truth == nil)
        let expired = owned(storeFact(.googlePlay, lookup: "tok-1", expires: -3, state: .expired), by: "someone-else")
        let lost = Decision.decide(
            row: row, facts: SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [], stores: [expired]), context: context)
        #expect(lost.action == .skipped && lost.drift == [.ownershipConflict], "another buyer's line never ends this row's tier")
    }

    @Test("the buyer named is the user id or the row's account_token; an Apple token compares case-insensitively")
    func ownAccounts() {
        var row = lineRow(source: "apple_iap", product: "premium_monthly", otid: "1000")
        let apple = storeFact(.appStore, "premium_monthly", lookup: "1000", expires: 30, state: .active, otid: "1000")
        row.accountToken = appleUUID
        for account in [appleUUID, appleUUID.uppercased(), "u1"] {
            let verdict = Decision.decide(
                row: row,
                facts: SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [], stores: [owned(apple, by: account)]),
                context: context)
            #expect(verdict.action != .skipped, "\(account)")
            #expect(verdict.truth?.tier == 1)
        }
        let google = storeFact(.googlePlay, lookup: "tok-1", expires: 30, state: .active)
        var googleRow = lineRow(source: "google_iap", ids: [.googlePlay: "tok-1"])
        googleRow.accountToken = "acct-AbC"
        #expect(Decision.isOwnAccount(BuyerAccount("acct-AbC", store: .playStore)!, row: googleRow))
        #expect(!Decision.isOwnAccount(BuyerAccount("acct-abc", store: .playStore)!, row: googleRow), "only Apple's UUIDs ignore case")
        let foreign = Decision.decide(
            row: googleRow,
            facts: SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [], stores: [owned(google, by: "acct-abc")]),
            context: context)
        #expect(foreign.drift == [.ownershipConflict])
    }

    @Test("a purchase linked tonight is written into its own store's column with the change: linked_purchase")
    func linkWritesIdentifier() {
        var row = UserRow(id: "u1", currentTier: 0, status: "none")
        row.links = [.googlePlay: "tok-new"]
        let fact = owned(storeFact(.googlePlay, lookup: "tok-new", expires: 30, state: .active), by: "u1")
        let verdict = Decision.decide(
            row: row, facts: SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [], stores: [fact]), context: context)
        #expect(verdict.action == .restore)
        #expect(verdict.drift.contains(.linkedPurchase))
        #expect(verdict.truth?.storeIdentifiers[.googlePlay] == "tok-new")
        #expect(verdict.truth?.originalTransactionID == nil, "a Google token never goes into Apple's column")
    }

    @Test("an Apple purchase linked to an empty row writes its original transaction id; to a row naming another, conflict")
    func appleLink() {
        var row = UserRow(id: "u1", currentTier: 0, status: "none")
        row.links = [.appStore: "2000"]
        let fact = owned(
            storeFact(.appStore, "premium_monthly", lookup: "2000", expires: 30, state: .active, otid: "2000"), by: appleUUID.uppercased())
        row.accountToken = appleUUID
        let linked = Decision.decide(
            row: row, facts: SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [], stores: [fact]), context: context)
        #expect(linked.truth?.originalTransactionID == "2000")
        #expect(linked.drift.contains(.linkedPurchase))
        row.originalTransactionID = "1000"
        let other = Decision.decide(
            row: row, facts: SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [], stores: [fact]), context: context)
        #expect(other.action == .skipped)
        #expect(other.drift == [.ownershipConflict], "never over a different non-null identifier")
    }

    @Test("a newer Google token of the row's line is written over the old one: stale_identifier, not a conflict")
    func newerTokenOfSameLine() {
        var row = lineRow(source: "google_iap", end: -2, ids: [.googlePlay: "tok-old"])
        row.links = [.googlePlay: "tok-new"]
        var fact = storeFact(.googlePlay, lookup: "tok-new", expires: 30, state: .active)
        fact.aliases = ["tok-old"]  // linkedPurchaseToken
        let verdict = Decision.decide(
            row: row, facts: SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [], stores: [fact]), context: context)
        #expect(verdict.action == .extend)
        #expect(verdict.drift.contains(.staleIdentifier))
        #expect(verdict.truth?.storeIdentifiers[.googlePlay] == "tok-new")
        var unrelated = storeFact(.googlePlay, lookup: "tok-new", expires: 30, state: .active)
        unrelated.aliases = []
        let conflict = Decision.decide(
            row: row, facts: SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [], stores: [unrelated]), context: context)
        #expect(conflict.drift == [.ownershipConflict])
    }

    @Test("the App Store original transaction that now grants the tier replaces an older one: stale_identifier")
    func appleStale() {
        let row = lineRow(source: "apple_iap", product: "premium_monthly", end: -2, otid: "1000")
        var rc = rcEntry("premium_monthly", store: .appStore, txn: "2005", expires: 30)
        rc.originalTransactionID = "2000"
        let verdict = Decision.decide(
            row: row, facts: SourceFacts(revenueCatKnowsSubscriber: true, revenueCatPurchases: [rc]), context: context)
        #expect(verdict.truth?.originalTransactionID == "2000")
        #expect(verdict.drift.contains(.staleIdentifier))
    }

    @Test("a link whose store was not answered about is not written; an identifier write alone is a status change")
    func linkNeedsAnswer() {
        var row = lineRow(source: "google_iap", ids: [:])
        row.links = [.googlePlay: "tok-new"]
        let rc = rcEntry(txn: "GPA.1..0", expires: 15)
        let unanswered = Decision.decide(
            row: row, facts: SourceFacts(revenueCatKnowsSubscriber: true, revenueCatPurchases: [rc]), context: context)
        #expect(unanswered.truth?.storeIdentifiers[.googlePlay] == nil)
        #expect(!unanswered.drift.contains(.linkedPurchase))
        let fact = storeFact(.googlePlay, lookup: "tok-new", order: "GPA.1..0", expires: 15, state: .active)
        let answered = Decision.decide(
            row: row, facts: SourceFacts(revenueCatKnowsSubscriber: true, revenueCatPurchases: [rc], stores: [fact]), context: context)
        #expect(answered.truth?.storeIdentifiers[.googlePlay] == "tok-new")
        #expect(answered.action == .statusChange)
        #expect(answered.drift.contains(.linkedPurchase))
    }
}

@Suite("Linking never writes a sandbox purchase's identifier in a production run (CONTRACT 'Whose purchase it is')")
struct SandboxLinkTests {
    @Test("a linked sandbox (or unstated) Google token is not written; in a sandbox run it is")
    func sandboxLink() {
        var row = UserRow(id: "u1", currentTier: 0, status: "none")
        row.links = [.googlePlay: "tok-test"]
        for sandbox in [true, nil] as [Bool?] {
            let fact = storeFact(.googlePlay, lookup: "tok-test", expires: 30, state: .active, sandbox: sandbox)
            let verdict = Decision.decide(
                row: row, facts: SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [], stores: [fact]), context: context)
            #expect(verdict.truth?.storeIdentifiers[.googlePlay] == nil)
            #expect(!verdict.drift.contains(.linkedPurchase))
        }
        let sandboxRun = DecisionContext(asOf: T, environment: .sandbox, catalog: catalog)
        let fact = storeFact(.googlePlay, lookup: "tok-test", expires: 30, state: .active, sandbox: true)
        let verdict = Decision.decide(
            row: row, facts: SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [], stores: [fact]), context: sandboxRun)
        #expect(verdict.truth?.storeIdentifiers[.googlePlay] == "tok-test")
    }
}
