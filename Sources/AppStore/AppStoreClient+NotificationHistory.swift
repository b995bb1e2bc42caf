import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
import SourceHTTP
import SubreconCore

/// One verified notification from Apple's history that names a purchase (CONTRACT "Which users a run asks about" store feeds).
public struct AppleNotificationEntry: Sendable, Hashable {
    public var notificationUUID: String
    public var notificationType: String
    public var subtype: String?
    /// The original transaction id of the signed transaction inside: finds the user.
    public var originalTransactionID: String
    /// The verified signed transaction inside (`signedTransactionInfo`).
    public var transaction: JWSTransactionDecodedPayload? = nil

    /// The notification types that state a refunded or revoked purchase (CONTRACT "Finance figures"). `REFUND_REVERSED` is not one,
    /// and it removes nothing: `refunds_seen` is a history of the refunds seen, not a state.
    public static let refundTypes: Set<String> = ["REFUND", "REVOKE"]

    /// The refunded purchase a `REFUND` or `REVOKE` entry states (its transaction has a `revocationDate`), mapped by
    /// the same function as a lookup's answer (`AppleSubscriptionMapping.purchaseFact`), so `SeenRefund.of` keys
    /// and prices it exactly as it would the same transaction seen in a lookup; nil for any other entry.
    public var refundedPurchase: PurchaseFact? {
        guard Self.refundTypes.contains(notificationType), let transaction, transaction.revocationDate != nil else { return nil }
        return try? AppleSubscriptionMapping.purchaseFact(status: nil, transaction: transaction, renewal: nil)
    }
}

/// What reading the notification history over a window gave.
public struct AppleNotificationFeed: Sendable, Hashable {
    /// Verified entries, one per `notificationUUID`, in the order read.
    public var entries: [AppleNotificationEntry] = []
    /// Notifications whose signed payload or transaction failed verification (forged, tampered, another app's or
    /// environment's): counted and ignored, never acted on.
    public var rejected = 0
    /// Pages read.
    public var pages = 0

    /// The purchases the entries state (CONTRACT "Whose purchase it is": `FeedEntries.purchases`): for each original transaction, the
    /// signed transaction Apple signed last (ties: the later read), mapped as a lookup maps it
    /// (`AppleSubscriptionMapping.purchaseFact`, `appAccountToken` included; no status: the history carries none),
    /// keyed by the original transaction id.
    public var statedPurchases: [(key: String, purchase: PurchaseFact)] {
        var latest: [String: JWSTransactionDecodedPayload] = [:]
        var order: [String] = []
        for entry in entries {
            guard let transaction = entry.transaction else { continue }
            let key = entry.originalTransactionID
            if let kept = latest[key] {
                if (transaction.signedDate ?? .distantPast) >= (kept.signedDate ?? .distantPast) { latest[key] = transaction }
            } else {
                latest[key] = transaction
                order.append(key)
            }
        }
        return order.compactMap { key in
            guard let transaction = latest[key],
                let purchase = try? AppleSubscriptionMapping.purchaseFact(status: nil, transaction: transaction, renewal: nil)
            else { return nil }
            return (key, purchase)
        }
    }
}

extension AppStoreClient {
    /// The notification types that change entitlement inside a paid period, each read from the history (besides
    /// every notification Apple failed to deliver, `onlyFailures`): refunds and revocations (a refund in month 2
    /// of an annual plan, Family Sharing revoked), refunds reversed (reinstate), expiries and grace expiries
    /// (missed downgrades), failures to renew (billing issue entered), renewals (missed renewals and billing
    /// recoveries), and renewal status changes (auto-renew off: `canceled`); and the types that start or restart a
    /// purchase line (CONTRACT "Which users a run asks about", "Whose purchase it is"): a first purchase or a resubscription (`SUBSCRIBED`), an offer redeemed or an
    /// immediate upgrade (`OFFER_REDEEMED`, `DID_CHANGE_RENEWAL_PREF`), a renewal date extended (`RENEWAL_EXTENDED`):
    /// so a lapsed user who resubscribed is found whatever the lookback.
    public static let entitlementNotificationTypes = [
        "REFUND", "REVOKE", "REFUND_REVERSED", "EXPIRED", "GRACE_PERIOD_EXPIRED", "DID_FAIL_TO_RENEW", "DID_RENEW",
        "DID_CHANGE_RENEWAL_STATUS", "SUBSCRIBED", "OFFER_REDEEMED", "DID_CHANGE_RENEWAL_PREF", "RENEWAL_EXTENDED",
    ]
    /// Pages read per query at most (20 records each): beyond it the list ends as incomplete (the feed fails)
    /// rather than run unbounded (CONTRACT "Hostile answers and bounded work").
    public static let maxNotificationPages = 500

    /// Reads Apple's notification history for `[since, until)` in the run's environment: once for the notifications
    /// Apple failed to deliver, once per type of `entitlementNotificationTypes`. Every `signedPayload` and the
    /// transaction inside are verified like any JWS (bundle id, environment); a notification that fails is counted
    /// in `rejected`. Entries are deduplicated by `notificationUUID`. Any request failing fails the feed, and so does
    /// a list that ends incomplete (CONTRACT "Hostile answers and bounded work"): a page without `hasMore`, `hasMore` without a `paginationToken`, a
    /// `paginationToken` seen before in the same query, or more than `maxNotificationPages` pages.
    public func notificationHistory(since: Date, until: Date) async -> Result<AppleNotificationFeed, SourceError> {
        let environment: StoreEnvironment = configuration.environment
        let expected: StoreEnvironmentName = environment == .production ? .production : .sandbox
        var feed = AppleNotificationFeed()
        var seen = Set<String>()
        let start = Int64((since.timeIntervalSince1970 * 1000).rounded())
        let end = Int64((until.timeIntervalSince1970 * 1000).rounded())
        var queries = [NotificationHistoryRequest(startDate: start, endDate: end, notificationType: nil, onlyFailures: true)]
        queries += Self.entitlementNotificationTypes.map {
            NotificationHistoryRequest(startDate: start, endDate: end, notificationType: $0, onlyFailures: nil)
        }
        for query in queries {
            var token: String?
            var pages = 0
            var tokensSeen = Set<String>()
            repeat {
                pages += 1
                if pages > Self.maxNotificationPages {
                    return .failure(
                        fetchError("notification history incomplete: more than \(Self.maxNotificationPages) pages for one query"))
                }
                let page: NotificationHistoryResponse
                switch await fetchHistoryPage(query, paginationToken: token, environment: environment) {
                case .failure(let error): return .failure(error)
                case .success(let body):
                    guard let decoded = try? AppStoreJSON.decode(NotificationHistoryResponse.self, from: body) else {
                        return .failure(fetchError("notification history: malformed body"))
                    }
                    page = decoded
                }
                feed.pages += 1
                for item in page.notificationHistory ?? [] {
                    guard let entry = await verifiedEntry(item.signedPayload, environment: expected) else {
                        feed.rejected += 1
                        continue
                    }
                    if seen.insert(entry.notificationUUID).inserted { feed.entries.append(entry) }
                }
                switch Self.nextToken(hasMore: page.hasMore, paginationToken: page.paginationToken, seen: &tokensSeen) {
                case .failure(let error): return .failure(error)
                case .success(let next): token = next
                }
            } while token != nil
        }
        return .success(feed)
    }

    /// Where a history query goes after a page (CONTRACT "Hostile answers and bounded work"): nil at its end (`hasMore: false`), the next token, or an
    /// error when the list cannot be known complete: `hasMore` missing, `hasMore` without a token, a token seen
    /// before (inserted into `seen`).
    static func nextToken(hasMore: Bool?, paginationToken: String?, seen: inout Set<String>) -> Result<String?, SourceError> {
        func incomplete(_ why: String) -> Result<String?, SourceError> {
            .failure(
                SourceError(origin: .appStore, kind: .fetch, message: "App Store Server API: notification history incomplete: " + why))
        }
        guard let hasMore else { return incomplete("a page without hasMore") }
        guard hasMore else { return .success(nil) }
        guard let token = paginationToken, !token.isEmpty else { return incomplete("hasMore without a paginationToken") }
        guard seen.insert(token).inserted else { return incomplete("a paginationToken seen before") }
        return .success(token)
    }

    /// The verified entry of one history record, or nil when it cannot be believed.
    func verifiedEntry(_ signedPayload: String?, environment: StoreEnvironmentName) async -> AppleNotificationEntry? {
        guard let signedPayload else { return nil }
        do {
            let payload = try await verifier.verify(signedPayload, as: NotificationPayload.self, now: now())
            guard let data = payload.data, data.bundleId == configuration.bundleID, data.environment == environment.rawValue,
                let uuid = payload.notificationUUID, !uuid.isEmpty, let type = payload.notificationType,
                let signedTransaction = data.signedTransactionInfo
            else { return nil }
            let transaction = try await verifier.verifyTransaction(signedTransaction, environment: environment, now: now())
            guard let original = transaction.originalTransactionId, !original.isEmpty else { return nil }
            return AppleNotificationEntry(
                notificationUUID: uuid, notificationType: type, subtype: payload.subtype, originalTransactionID: original,
                transaction: transaction)
        } catch {
            logger.debug("app store notification failed verification", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// One page of `POST /inApps/v1/notifications/history`, through `SourceTransport` (a fresh token per attempt).
    func fetchHistoryPage(
        _ query: NotificationHistoryRequest, paginationToken: String?, environment: StoreEnvironment
    ) async -> Result<Data, SourceError> {
        var url = configuration.baseURL(for: environment) + "/inApps/v1/notifications/history"
        if let paginationToken {
            let encoded = paginationToken.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? paginationToken
            url += "?paginationToken=" + encoded
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let body = try? encoder.encode(query) else { return .failure(fetchError("notification history: request not encodable")) }
        let outcome = await transport.send(
            logger: logger,
            request: { _ in try await authorizedRequest(url: url, method: .POST, json: body) },
            classify: { answer in
                switch classifyAnswer(answer) {
                case .success(.body(let data)): .success(data)
                case .success(.notFound): .fail(reason: "HTTP \(answer.status): not found")
                case .rateLimited(let wait): .rateLimited(wait)
                case .retry(let problem): .retry(problem: problem)
                case .fail(let reason): .fail(reason: reason)
                }
            })
        switch outcome {
        case .success(let delivery): return .success(delivery.value)
        case .failure(let failure): return .failure(fetchError("notification history: " + Self.message(for: failure)))
        }
    }
}
