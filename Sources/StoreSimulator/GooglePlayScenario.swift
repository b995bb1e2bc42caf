import Crypto
import Foundation
import SubreconCore
import _CryptoExtras

/// A Google service account for tests and the demo: a fresh RSA 2048 key and its JSON key text.
public struct GoogleTestServiceAccount: Sendable {
    public let clientEmail: String
    public let keyID: String
    public let tokenURI: String
    public let privateKey: _RSA.Signing.PrivateKey
    public var publicKey: _RSA.Signing.PublicKey { privateKey.publicKey }
    /// The private key in PKCS#8 PEM, as the JSON key holds it.
    public var privateKeyPEM: String { privateKey.pkcs8PEMRepresentation }

    /// - Parameter tokenURI: the simulator's token endpoint (e.g. `http://127.0.0.1:PORT/token`, or
    ///   `{base}/token` for the integration harness, which substitutes its server's base URL).
    public static func generate(
        clientEmail: String = "subrecon@subrecon-tests.iam.gserviceaccount.com", tokenURI: String
    ) throws -> GoogleTestServiceAccount {
        GoogleTestServiceAccount(
            clientEmail: clientEmail, keyID: "k" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased(),
            tokenURI: tokenURI, privateKey: try _RSA.Signing.PrivateKey(keySize: .bits2048))
    }

    /// The JSON key as Google's console downloads it (PKCS#8 PEM private key).
    public var json: String {
        let object: [String: String] = [
            "type": "service_account", "project_id": "subrecon-tests", "private_key_id": keyID,
            "private_key": privateKey.pkcs8PEMRepresentation, "client_email": clientEmail, "client_id": "100000000000000000001",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": tokenURI,
            "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}

/// One Play subscription as tests set it; encoded in `SubscriptionPurchaseV2`'s real JSON shape.
public struct SimulatedPlaySubscription: Sendable, Hashable {
    public struct LineItem: Sendable, Hashable {
        public var productID: String
        public var expiryTime: Date?
        /// nil: a prepaid plan; otherwise an auto-renewing plan with this `autoRenewEnabled`.
        public var autoRenewEnabled: Bool?
        /// `recurringPrice` as Google writes it: currency, units (int64 text), nanos.
        public var price: (currency: String, units: String, nanos: Int)?
        public var orderID: String?

        public init(
            productID: String, expiryTime: Date?, autoRenewEnabled: Bool? = true,
            price: (currency: String, units: String, nanos: Int)? = ("USD", "9", 990_000_000), orderID: String? = nil
        ) {
            self.productID = productID
            self.expiryTime = expiryTime
            self.autoRenewEnabled = autoRenewEnabled
            self.price = price
            self.orderID = orderID
        }

        public static func == (a: LineItem, b: LineItem) -> Bool {
            a.productID == b.productID && a.expiryTime == b.expiryTime && a.autoRenewEnabled == b.autoRenewEnabled
                && a.orderID == b.orderID && a.price?.currency == b.price?.currency && a.price?.units == b.price?.units
                && a.price?.nanos == b.price?.nanos
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(productID)
            hasher.combine(expiryTime)
            hasher.combine(orderID)
        }
    }

    /// `SUBSCRIPTION_STATE_…` text, sent as is.
    public var state: String
    public var startTime: Date?
    public var lineItems: [LineItem]
    public var testPurchase: Bool
    /// `externalAccountIdentifiers.obfuscatedExternalAccountId`, the buyer's account the app handed Google (CONTRACT
    /// "Whose purchase it is"); nil: no `externalAccountIdentifiers` at all.
    public var obfuscatedAccountID: String?

    public init(
        state: String, startTime: Date?, lineItems: [LineItem], testPurchase: Bool = false, obfuscatedAccountID: String? = nil
    ) {
        self.obfuscatedAccountID = obfuscatedAccountID
        self.state = state
        self.startTime = startTime
        self.lineItems = lineItems
        self.testPurchase = testPurchase
    }

    /// One auto-renewing line item of `product` in `state` (e.g. `"SUBSCRIPTION_STATE_ACTIVE"`).
    public static func single(
        _ state: String, product: String, start: Date?, expiry: Date?, autoRenew: Bool? = true, testPurchase: Bool = false,
        orderID: String? = "GPA.3311-2222-1111-00000..0"
    ) -> SimulatedPlaySubscription {
        SimulatedPlaySubscription(
            state: state, startTime: start,
            lineItems: [LineItem(productID: product, expiryTime: expiry, autoRenewEnabled: autoRenew, orderID: orderID)],
            testPurchase: testPurchase)
    }

    /// The JSON body Google would answer.
    public func jsonBody() -> Data {
        var object: [String: Any] = [
            "kind": "androidpublisher#subscriptionPurchaseV2", "regionCode": "US", "subscriptionState": state,
            "acknowledgementState": "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED",
        ]
        if let obfuscatedAccountID { object["externalAccountIdentifiers"] = ["obfuscatedExternalAccountId": obfuscatedAccountID] }
        if let startTime { object["startTime"] = GooglePlaySimulator.rfc3339(startTime) }
        if testPurchase { object["testPurchase"] = [String: Any]() }
        if state == "SUBSCRIPTION_STATE_PAUSED" {
            object["pausedStateContext"] = ["autoResumeTime": GooglePlaySimulator.rfc3339(Date(timeIntervalSince1970: 4_102_444_800))]
        }
        if state == "SUBSCRIPTION_STATE_CANCELED" {
            object["canceledStateContext"] = ["userInitiatedCancellation": ["cancelTime": GooglePlaySimulator.rfc3339(startTime ?? Date())]]
        }
        object["lineItems"] = lineItems.map { item -> [String: Any] in
            var line: [String: Any] = ["productId": item.productID, "offerDetails": ["basePlanId": "monthly", "offerTags": [String]()]]
            if let expiry = item.expiryTime { line["expiryTime"] = GooglePlaySimulator.rfc3339(expiry) }
            if let order = item.orderID { line["latestSuccessfulOrderId"] = order }
            if let autoRenew = item.autoRenewEnabled {
                var plan: [String: Any] = ["autoRenewEnabled": autoRenew]
                if let price = item.price {
                    plan["recurringPrice"] = ["currencyCode": price.currency, "units": price.units, "nanos": price.nanos]
                }
                line["autoRenewingPlan"] = plan
            } else {
                line["prepaidPlan"] = ["allowExtendAfterTime": GooglePlaySimulator.rfc3339(item.expiryTime ?? Date())]
            }
            return line
        }
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
    }
}

/// One voided purchase as tests set it; encoded in `VoidedPurchase`'s real JSON shape (int64 fields as strings).
public struct SimulatedVoidedPurchase: Sendable, Hashable {
    public var purchaseToken: String
    public var orderID: String?
    public var purchaseTime: Date
    public var voidedTime: Date
    /// A subscription's purchase: listed only when the request asks `type=1`.
    public var isSubscription: Bool
    /// 0 user, 1 developer, 2 Google.
    public var voidedSource: Int
    /// 0 other, 1 remorse, ..., 7 chargeback.
    public var voidedReason: Int

    public init(
        purchaseToken: String, orderID: String? = "GPA.3399-1111-2222-33333", purchaseTime: Date? = nil, voidedTime: Date,
        isSubscription: Bool = true, voidedSource: Int = 0, voidedReason: Int = 1
    ) {
        self.purchaseToken = purchaseToken
        self.orderID = orderID
        self.purchaseTime = purchaseTime ?? voidedTime.addingTimeInterval(-5 * 86_400)
        self.voidedTime = voidedTime
        self.isSubscription = isSubscription
        self.voidedSource = voidedSource
        self.voidedReason = voidedReason
    }

    var json: [String: Any] {
        var object: [String: Any] = [
            "kind": "androidpublisher#voidedPurchase", "purchaseToken": purchaseToken,
            "purchaseTimeMillis": String(Int64((purchaseTime.timeIntervalSince1970 * 1000).rounded(.down))),
            "voidedTimeMillis": String(Int64((voidedTime.timeIntervalSince1970 * 1000).rounded(.down))),
            "voidedSource": voidedSource, "voidedReason": voidedReason,
        ]
        if let orderID { object["orderId"] = orderID }
        return object
    }
}

/// A scripted answer of the simulated Play API for one purchase token.
public enum GooglePlayFault: Sendable, Hashable {
    /// This status with Google's JSON error body.
    case status(Int)
    /// 429 with an optional `Retry-After` header.
    case rateLimited(retryAfter: String?)
    /// 200 with a body that is not JSON.
    case malformedJSON
    /// Exactly this answer.
    case raw(status: Int, headers: [String: String], body: Data)
    /// The normal answer, its body sent one byte at a time.
    case trickle(pause: Duration)
}

/// What the simulated Google has answered.
public struct GooglePlaySimulatorCounters: Sendable, Hashable {
    /// Token requests (accepted or not).
    public var tokenRequests = 0
    /// Access tokens issued.
    public var tokensIssued = 0
    /// Assertions refused (bad signature, claims, expired).
    public var assertionsRefused = 0
    /// Requests to subscriptionsv2.
    public var apiRequests = 0
    /// API requests refused 401 (missing, unknown or expired access token).
    public var unauthorized = 0
    /// Requests to voidedpurchases.list (not counted in `apiRequests`).
    public var voidedRequests = 0
    /// Requests of any kind answered by `setDown(status:)` (counted nowhere else).
    public var downAnswers = 0
    public init() {}
}

/// How Google refuses a valid access token of a service account the app's Play Console has not granted, with the
/// body Google sends (its `error.errors[].reason` names the cause).
public enum GooglePlayAccessDenial: Sendable, Hashable {
    /// 401 `permissionDenied`: the account is not invited to the app (or lacks "View financial data").
    case permissionDenied
    /// 403 `projectNotLinked`: the account's Cloud project is not linked to the developer account.
    case projectNotLinked
    /// 403 `accessNotConfigured`: the Google Play Android Developer API is not enabled in the account's project.
    case apiDisabled

    var response: SimulatorResponse {
        let message: String
        let reason: String
        let code: Int
        var status: String?
        var domain = "androidpublisher"
        switch self {
        case .permissionDenied:
            (code, reason, message) = (
                401, "permissionDenied", "The current user has insufficient permissions to perform the requested operation."
            )
        case .projectNotLinked:
            (code, reason) = (403, "projectNotLinked")
            message = "The project id used to call the Google Play Developer API has not been linked in the Google Play Developer Console."
        case .apiDisabled:
            (code, reason, status, domain) = (403, "accessNotConfigured", "PERMISSION_DENIED", "usageLimits")
            message =
                "Google Play Android Developer API has not been used in project 123456789012 before or it is disabled. Enable it by "
                + "visiting the Google Cloud console, then retry."
        }
        var detail: [String: Any] = [
            "code": code, "message": message, "errors": [["message": message, "domain": domain, "reason": reason]],
        ]
        if let status { detail["status"] = status }
        return .json(code, (try? JSONSerialization.data(withJSONObject: ["error": detail], options: [.sortedKeys])) ?? Data())
    }
}
