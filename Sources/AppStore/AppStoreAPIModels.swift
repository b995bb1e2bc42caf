import Foundation

/// Body of `GET /inApps/v1/subscriptions/{transactionId}` (apple.md §1.4).
public struct StatusResponse: Sendable, Hashable, Codable {
    public var environment: String?
    public var bundleId: String?
    public var appAppleId: Int64?
    public var data: [SubscriptionGroupIdentifierItem]?

    public init(
        environment: String? = nil, bundleId: String? = nil, appAppleId: Int64? = nil, data: [SubscriptionGroupIdentifierItem]? = nil
    ) {
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.data = data
    }
}

/// One subscription group in a `StatusResponse`.
public struct SubscriptionGroupIdentifierItem: Sendable, Hashable, Codable {
    public var subscriptionGroupIdentifier: String?
    public var lastTransactions: [LastTransactionsItem]?

    public init(subscriptionGroupIdentifier: String? = nil, lastTransactions: [LastTransactionsItem]? = nil) {
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.lastTransactions = lastTransactions
    }
}

/// The latest signed transaction and renewal info of one subscription.
public struct LastTransactionsItem: Sendable, Hashable, Codable {
    /// 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
    public var status: Int?
    public var originalTransactionId: String?
    public var signedTransactionInfo: String?
    public var signedRenewalInfo: String?

    public init(
        status: Int? = nil, originalTransactionId: String? = nil, signedTransactionInfo: String? = nil, signedRenewalInfo: String? = nil
    ) {
        self.status = status
        self.originalTransactionId = originalTransactionId
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }
}

/// Error body of a non-2xx answer: `{errorCode, errorMessage}`. Unknown codes are kept raw.
public struct AppStoreErrorPayload: Sendable, Hashable, Codable {
    public var errorCode: Int64?
    public var errorMessage: String?

    public init(errorCode: Int64? = nil, errorMessage: String? = nil) {
        self.errorCode = errorCode
        self.errorMessage = errorMessage
    }

    /// Error codes the client retries (apple.md §1.8): the `...Retryable` ones.
    public static let retryableCodes: Set<Int64> = [4_040_002, 4_040_004, 4_040_006, 5_000_001]
    /// TransactionIdNotFoundError: ask the other environment.
    public static let transactionIDNotFound: Int64 = 4_040_010
    /// RateLimitExceededError.
    public static let rateLimitExceeded: Int64 = 4_290_000
}
