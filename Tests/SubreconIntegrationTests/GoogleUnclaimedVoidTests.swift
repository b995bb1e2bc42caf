import Foundation
import GooglePlay
import SubreconCore
import Testing

@testable import SubreconApp

/// The Google adapter's voids for a lookup (docs/CONTRACT.md "Sources and the decision": a refund is a fact about its
/// line): besides those its row carries, the night's unclaimed ones (tokens no row holds) that the line's own keys
/// name, its `linkedPurchaseToken` or an order of the line, applied fail-closed by `GooglePlayMapping.applyingVoids`.
@Suite("Google Play adapter: unclaimed voids reach the line whose keys name them")
struct GoogleUnclaimedVoidTests {
    static let order = "GPA.5555-6666-7777-88888"
    static let voidedAt = ISO8601.date("2026-06-10T00:00:00Z")!

    static func answer(_ state: String, linked: String?) throws -> [StoreFact] {
        let purchase = SubscriptionPurchaseV2(
            startTime: "2026-05-01T00:00:00Z", subscriptionState: "SUBSCRIPTION_STATE_" + state, linkedPurchaseToken: linked,
            lineItems: [
                SubscriptionLineItem(
                    productId: "premium_monthly", expiryTime: "2026-07-01T00:00:00Z",
                    autoRenewingPlan: .init(autoRenewEnabled: false), latestSuccessfulOrderId: order + "..1")
            ])
        return try GooglePlayMapping.storeFacts(purchase, token: "tok-new")
    }

    static func unclaimed(_ token: String, order: String) -> FeedRefundFact {
        FeedRefundFact(
            identifier: token,
            refund: SeenRefund(
                store: StoreKind.playStore.rawValue, transactionID: order, refundedAt: voidedAt, amount: nil, currency: nil))
    }

    /// The row holding the new token, sharing the night's index of the unclaimed voids.
    static func row(_ unclaimed: [FeedRefundFact]) -> UserRow {
        var row = UserRow(id: "u-1", currentTier: 1, status: "active", source: "google_iap", productID: "premium_monthly")
        row.identifiers[.googlePlay] = "tok-new"
        row.unclaimedFeedRefunds = UnclaimedFeedRefunds(unclaimed)
        return row
    }

    @Test("a void of the replaced token, or of an earlier order of the line, refunds the EXPIRED line, keyed by its order")
    func reachesExpiredLine() throws {
        let expired = try Self.answer("EXPIRED", linked: "tok-old")
        for void in [
            Self.unclaimed("tok-old", order: "GPA.1111-2222-3333-44444..0"), Self.unclaimed("tok-gone", order: Self.order + "..0"),
        ] {
            let row = Self.row([void, Self.unclaimed("tok-elsewhere", order: "GPA.9999-0000-1111-22222..0")])
            let voids = GooglePlaySource.tonightsVoids(of: row, found: expired)
            #expect(voids.map(\.orderID) == [void.refund.transactionID], "only the void the line's keys name")
            let voided = try #require(GooglePlayMapping.applyingVoids(expired, voids: voids).first)
            #expect(voided.purchase.refundTransactionID == void.refund.transactionID)
            #expect(Decision.judge(voided.purchase, asOf: Self.voidedAt.addingTimeInterval(86_400)).known?.status == .refunded)
        }
    }

    @Test("never a live line, never a line whose keys name none of them")
    func failsClosed() throws {
        let old = Self.unclaimed("tok-old", order: "GPA.1111-2222-3333-44444..0")
        let live = try Self.answer("ACTIVE", linked: "tok-old")
        #expect(GooglePlayMapping.applyingVoids(live, voids: GooglePlaySource.tonightsVoids(of: Self.row([old]), found: live)) == live)
        let other = try Self.answer("EXPIRED", linked: "tok-previous")
        #expect(GooglePlaySource.tonightsVoids(of: Self.row([old]), found: other).isEmpty)
        #expect(GooglePlaySource.tonightsVoids(of: Self.row([old]), found: []).isEmpty, "no answer, no line: nothing")
    }
}
