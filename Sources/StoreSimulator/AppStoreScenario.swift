import Foundation
import SubreconCore

/// One App Store subscription the simulator knows, keyed by its original transaction id.
public struct AppStoreScenario: Sendable, Hashable {
    public var originalTransactionID: String
    /// The latest transaction id; defaults to the original one.
    public var transactionID: String
    public var productID: String
    /// 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
    public var status: Int
    public var environment: StoreEnvironment
    /// nil: the simulator's bundle id.
    public var bundleID: String?
    public var purchaseDate: Date
    public var expiresDate: Date
    public var gracePeriodExpiresDate: Date?
    public var revocationDate: Date?
    public var revocationReason: Int?
    public var autoRenew: Bool
    public var isInBillingRetryPeriod: Bool
    /// Milliunits (9990 = 9.99).
    public var price: Int64?
    public var currency: String?
    public var subscriptionGroupIdentifier: String
    /// Leave `signedRenewalInfo` out of the answer (Apple may).
    public var omitsRenewalInfo = false
    /// `signedRenewalInfo.renewalPrice` in milliunits of `currency`; nil: the same as `price`.
    public var renewalPrice: Int64?
    /// The transaction's `inAppOwnershipType` (`PURCHASED`, `FAMILY_SHARED`).
    public var ownershipType = "PURCHASED"
    /// The transaction's `offerType` (1 introductory, 2 promotional, 3 offer code, 4 win-back); nil: none.
    public var offerType: Int?
    /// The transaction's `offerDiscountType` (`FREE_TRIAL`, `PAY_AS_YOU_GO`, `PAY_UP_FRONT`); nil: none.
    public var offerDiscountType: String?
    /// The transaction's `appAccountToken` (the buyer's account the app handed Apple, CONTRACT "Whose purchase it is"), written as given
    /// (a hostile test may give a non-UUID); nil: the key is left out.
    public var appAccountToken: String?

    public init(
        originalTransactionID: String, transactionID: String? = nil, productID: String, status: Int,
        environment: StoreEnvironment = .production, bundleID: String? = nil, purchaseDate: Date, expiresDate: Date,
        gracePeriodExpiresDate: Date? = nil, revocationDate: Date? = nil, revocationReason: Int? = nil,
        autoRenew: Bool = true, isInBillingRetryPeriod: Bool = false, price: Int64? = nil, currency: String? = nil,
        subscriptionGroupIdentifier: String = "subrecon.group"
    ) {
        self.originalTransactionID = originalTransactionID
        self.transactionID = transactionID ?? originalTransactionID
        self.productID = productID
        self.status = status
        self.environment = environment
        self.bundleID = bundleID
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.autoRenew = autoRenew
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.price = price
        self.currency = currency
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
    }

    var environmentName: String { environment == .production ? "Production" : "Sandbox" }
}

/// A misbehaviour of the simulator for one transaction id.
public enum AppStoreFault: Sendable, Hashable {
    /// Answer `status` with `{errorCode}` (or no body when nil) the next `times` requests.
    case error(status: Int, errorCode: Int?, times: Int)
    /// Answer 429 with `Retry-After` = now + `after`, as a Unix time in milliseconds, the next `times` requests.
    case rateLimited(after: Duration, times: Int)
    /// Answer 200 with a body that is not JSON.
    case malformedBody
    /// Sign the transaction with a chain that does not lead to the trusted root.
    case forgedSignature
    /// Keep the signature but change the payload after signing.
    case tamperedPayload
    /// Answer after `delay`.
    case delay(Duration)
    /// Answer exactly this (status, headers, body bytes) the next `times` requests: hostile or malformed answers.
    case raw(status: Int, headers: [String: String], body: Data, times: Int)
    /// Answer normally, but send the body one byte at a time with `pause` between bytes (a trickling peer).
    case trickle(pause: Duration)
}

/// What the simulator decoded from the last bearer token it accepted or rejected.
public struct AppStoreRecordedToken: Sendable, Hashable {
    public var header: [String: String]
    public var issuer: String?
    public var audience: String?
    public var bundleID: String?
    public var issuedAt: Int?
    public var expiresAt: Int?
    public var accepted: Bool
}

/// Wire shapes of Apple's signed payloads (dates in ms), as the simulator signs them.
struct SimulatedTransactionPayload: Encodable {
    var originalTransactionId: String
    var transactionId: String
    var bundleId: String
    var productId: String
    var subscriptionGroupIdentifier: String
    var purchaseDate: Int64
    var originalPurchaseDate: Int64
    var expiresDate: Int64
    var quantity = 1
    var type = "Auto-Renewable Subscription"
    var inAppOwnershipType = "PURCHASED"
    var offerType: Int?
    var offerDiscountType: String?
    var signedDate: Int64
    var revocationDate: Int64?
    var revocationReason: Int?
    var environment: String
    var transactionReason = "PURCHASE"
    var price: Int64?
    var currency: String?
    var appAccountToken: String?
}

struct SimulatedRenewalPayload: Encodable {
    var originalTransactionId: String
    var autoRenewProductId: String
    var productId: String
    var autoRenewStatus: Int
    var isInBillingRetryPeriod: Bool
    var gracePeriodExpiresDate: Int64?
    var signedDate: Int64
    var environment: String
    var renewalPrice: Int64?
    var currency: String?
    var expirationIntent: Int?
}

extension Date {
    var unixMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
}
