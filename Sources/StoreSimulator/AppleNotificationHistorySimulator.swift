import Crypto
import Foundation
import SubreconCore

/// One notification in the simulated history.
public struct AppleHistoryNotification: Sendable, Hashable {
    public var uuid: String
    public var type: String
    public var subtype: String?
    public var originalTransactionID: String
    public var productID: String
    /// When Apple sent it (the history's date filter).
    public var sentAt: Date
    /// Apple failed to deliver it (`onlyFailures`).
    public var deliveryFailed: Bool
    /// Signed by a chain that does not lead to the trusted root.
    public var forged: Bool
    /// Another app's bundle id inside.
    public var bundleID: String?
    /// The signed transaction's `transactionId` (default: the original transaction id + `-n`).
    public var transactionID: String?
    /// The signed transaction's `revocationDate` (a refund or revocation); nil: none.
    public var revocationDate: Date?
    /// The signed transaction's `price` in milliunits of `currency`; nil: not stated.
    public var price: Int64?
    public var currency: String?
    /// The signed transaction's `inAppOwnershipType`.
    public var ownership: String
    /// The signed transaction's `offerDiscountType` (`FREE_TRIAL`); with `offerType` 1 when set.
    public var offerDiscountType: String?
    /// The signed transaction's `appAccountToken`, written as given; nil: the key is left out.
    public var appAccountToken: String?

    public init(
        uuid: String = UUID().uuidString, type: String, subtype: String? = nil, originalTransactionID: String,
        productID: String = "premium_monthly", sentAt: Date, deliveryFailed: Bool = false, forged: Bool = false,
        bundleID: String? = nil, transactionID: String? = nil, revocationDate: Date? = nil, price: Int64? = nil,
        currency: String? = nil, ownership: String = "PURCHASED", offerDiscountType: String? = nil
    ) {
        self.transactionID = transactionID
        self.revocationDate = revocationDate
        self.price = price
        self.currency = currency
        self.ownership = ownership
        self.offerDiscountType = offerDiscountType
        self.uuid = uuid
        self.type = type
        self.subtype = subtype
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.sentAt = sentAt
        self.deliveryFailed = deliveryFailed
        self.forged = forged
        self.bundleID = bundleID
    }
}

/// A scripted pagination fault of the simulated notification history (CONTRACT "Hostile answers and bounded work").
public enum HistoryPageFault: Sendable, Hashable {
    /// Every page leaves `hasMore` out (the `paginationToken` is still there when more follows).
    case omitHasMore
    /// Every page says `hasMore: true` with the same `paginationToken`, which serves the first page again.
    case repeatToken
}

/// `POST /inApps/v1/notifications/history` on loopback (App Store Server API): the same bearer token check as
/// `AppStoreSimulator`, `startDate`/`endDate` (ms), `notificationType`, `onlyFailures`, pages of `pageSize` with a
/// `paginationToken`; every `signedPayload` (and the transaction inside) signed with `pki` (or a forger's chain).
public struct AppleNotificationHistorySimulator: SimulatorRoute {
    let pki: AppleTestPKI
    let forger: AppleTestPKI
    let apiPublicKey: P256.Signing.PublicKey
    let issuerID: String
    let keyID: String
    let bundleID: String
    let state = HistoryState()
    let now: @Sendable () -> Date

    public init(
        pki: AppleTestPKI, apiPublicKey: P256.Signing.PublicKey, issuerID: String, keyID: String, bundleID: String,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        self.pki = pki
        self.forger = try AppleTestPKI.generate(now: now(), name: "forged-history")
        self.apiPublicKey = apiPublicKey
        self.issuerID = issuerID
        self.keyID = keyID
        self.bundleID = bundleID
        self.now = now
    }

    public func add(_ notification: AppleHistoryNotification) async { await state.add(notification) }
    /// Records a page holds (Apple: 20).
    public func setPageSize(_ size: Int) async { await state.setPageSize(size) }
    /// Answers the next `times` requests with `status` (and Apple's error body).
    public func failNext(status: Int, times: Int) async { await state.setFailure(status: status, times: times) }
    /// Requests received.
    public func requests() async -> Int { await state.requests }
    /// Answers every page with `fault` from now on (nil: none).
    public func setPageFault(_ fault: HistoryPageFault?) async { await state.setPageFault(fault) }

    public func handle(_ request: SimulatorRequest) async -> SimulatorResponse? {
        var segments = request.pathSegments
        if let first = segments.first, StoreEnvironment(rawValue: first) != nil { segments.removeFirst() }
        guard request.method == "POST", segments == ["inApps", "v1", "notifications", "history"] else { return nil }
        await state.countRequest()
        let token = AppStoreBearerToken.check(
            request.headers["authorization"], key: apiPublicKey, keyID: keyID, issuerID: issuerID, bundleID: bundleID, now: now())
        guard token.accepted else { return SimulatorResponse(status: 401) }
        if let status = await state.takeFailure() {
            return .json(status, Data(#"{"errorCode":5000000,"errorMessage":"An unknown error occurred."}"#.utf8))
        }
        guard let body = try? JSONSerialization.jsonObject(with: request.body) as? [String: Any],
            let start = (body["startDate"] as? NSNumber)?.int64Value, let end = (body["endDate"] as? NSNumber)?.int64Value
        else {
            return .json(400, Data(#"{"errorCode":4000000,"errorMessage":"Invalid request."}"#.utf8))
        }
        let type = body["notificationType"] as? String
        let onlyFailures = (body["onlyFailures"] as? Bool) == true
        let matching = await state.notifications.filter { n in
            let sent = Int64((n.sentAt.timeIntervalSince1970 * 1000).rounded())
            return sent >= start && sent <= end && (type == nil || n.type == type) && (!onlyFailures || n.deliveryFailed)
        }
        let offset = Int(request.query["paginationToken"] ?? "0") ?? 0
        let size = await state.pageSize
        let page = Array(matching.dropFirst(offset).prefix(size))
        let hasMore = offset + page.count < matching.count
        do {
            var history: [[String: Any]] = []
            for n in page {
                history.append([
                    "signedPayload": try signedPayload(n),
                    "sendAttempts": [
                        [
                            "attemptDate": Int64((n.sentAt.timeIntervalSince1970 * 1000).rounded()),
                            "sendAttemptResult": n.deliveryFailed ? "TIMED_OUT" : "SUCCESS",
                        ]
                    ],
                ])
            }
            var answer: [String: Any] = ["hasMore": hasMore, "notificationHistory": history]
            if hasMore { answer["paginationToken"] = String(offset + page.count) }
            switch await state.pageFault {
            case .omitHasMore?: answer["hasMore"] = nil
            case .repeatToken?: answer.merge(["hasMore": true, "paginationToken": "0"]) { $1 }
            case nil: break
            }
            return .json(200, try JSONSerialization.data(withJSONObject: answer, options: [.sortedKeys]))
        } catch {
            return .json(500, Data(#"{"errorCode":5000000,"errorMessage":"An unknown error occurred."}"#.utf8))
        }
    }

    private func signedPayload(_ n: AppleHistoryNotification) throws -> String {
        let sent = Int64((n.sentAt.timeIntervalSince1970 * 1000).rounded())
        let transaction = SimulatedTransactionPayload(
            originalTransactionId: n.originalTransactionID, transactionId: n.transactionID ?? n.originalTransactionID + "-n",
            bundleId: n.bundleID ?? bundleID, productId: n.productID, subscriptionGroupIdentifier: "group",
            purchaseDate: sent - 86_400_000, originalPurchaseDate: sent - 86_400_000, expiresDate: sent + 29 * 86_400_000,
            inAppOwnershipType: n.ownership, offerType: n.offerDiscountType == nil ? nil : 1,
            offerDiscountType: n.offerDiscountType, signedDate: sent, revocationDate: n.revocationDate?.unixMilliseconds,
            revocationReason: n.revocationDate == nil ? nil : 0, environment: "Production", price: n.price, currency: n.currency,
            appAccountToken: n.appAccountToken)
        let signer = n.forged ? forger : pki
        let signedTransaction = try signer.sign(payload: transaction)
        var payload: [String: Any] = [
            "notificationType": n.type, "notificationUUID": n.uuid, "version": "2.0", "signedDate": sent,
            "data": [
                "bundleId": n.bundleID ?? bundleID, "environment": "Production", "appAppleId": 1_234_567_890,
                "signedTransactionInfo": signedTransaction,
            ],
        ]
        if let subtype = n.subtype { payload["subtype"] = subtype }
        return try signer.sign(payloadJSON: try JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys]))
    }
}

actor HistoryState {
    private(set) var notifications: [AppleHistoryNotification] = []
    private(set) var pageSize = 20
    private(set) var requests = 0
    private var failure: (status: Int, remaining: Int)?
    private(set) var pageFault: HistoryPageFault?

    func setPageFault(_ fault: HistoryPageFault?) { pageFault = fault }

    func add(_ notification: AppleHistoryNotification) { notifications.append(notification) }
    func setPageSize(_ size: Int) { pageSize = max(1, size) }
    func countRequest() { requests += 1 }
    func setFailure(status: Int, times: Int) { failure = (status, times) }
    func takeFailure() -> Int? {
        guard let current = failure, current.remaining > 0 else { return nil }
        failure = (current.status, current.remaining - 1)
        return current.status
    }
}
