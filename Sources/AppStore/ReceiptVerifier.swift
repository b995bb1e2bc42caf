import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SourceHTTP
import SubreconCore

/// Settings of the legacy `verifyReceipt` bridge (`APPLE_SHARED_SECRET`, `APPLE_VERIFY_RECEIPT_URL`).
/// `description` never shows the shared secret.
public struct ReceiptVerifierConfiguration: Sendable, CustomStringConvertible {
    /// The app-specific shared secret sent as `password`. Secret: never logged or described.
    public var sharedSecret: String
    /// The app's bundle id (`APP_STORE_BUNDLE_ID`): a receipt of another app is never believed.
    public var bundleID: String
    /// Asked first.
    public var productionURL: String
    /// Asked when production answers 21007. Equal to `productionURL` when one URL serves both (then the
    /// answer's `environment` says which one answered).
    public var sandboxURL: String
    /// Deadline, body limit, attempts per URL for 5xx, network errors, timeouts and the retryable statuses 21005,
    /// 21009 and 211xx, and their backoff.
    public var requestPolicy: SourceRequestPolicy
    /// Largest response body accepted by default: a receipt's answer lists every transaction of the app.
    public static let defaultMaxBodyBytes = 1 << 22

    public static let productionEndpoint = "https://buy.itunes.apple.com/verifyReceipt"
    public static let sandboxEndpoint = "https://sandbox.itunes.apple.com/verifyReceipt"

    /// - Parameter urlOverride: one URL serving both environments (`APPLE_VERIFY_RECEIPT_URL`); nil = Apple's.
    public init(
        sharedSecret: String, bundleID: String, urlOverride: String? = nil, sandboxURLOverride: String? = nil,
        requestPolicy: SourceRequestPolicy = SourceRequestPolicy(maxBodyBytes: ReceiptVerifierConfiguration.defaultMaxBodyBytes)
    ) {
        self.sharedSecret = sharedSecret
        self.bundleID = bundleID
        self.productionURL = urlOverride ?? Self.productionEndpoint
        self.sandboxURL = sandboxURLOverride ?? urlOverride ?? Self.sandboxEndpoint
        self.requestPolicy = requestPolicy
    }

    public var description: String {
        "ReceiptVerifierConfiguration(sharedSecret: <redacted>, bundleID: \(bundleID), production: \(productionURL), sandbox: \(sandboxURL))"
    }
}

/// The legacy `POST /verifyReceipt` (apple.md §4): production first, sandbox on status 21007.
///
/// Statuses 0 and 21006 are answers; every other status, HTTP error, malformed body or exhausted retry is a
/// `SourceError(.appStore, .fetch)` naming the status. The shared secret and the receipt never appear in logs
/// or errors. The caller owns the `HTTPClient`.
public struct ReceiptVerifier: Sendable {
    /// The name used in observer calls (the run summary's request counts).
    public static let source = "app_store_receipt"
    public let configuration: ReceiptVerifierConfiguration
    let logger: Logger
    let transport: SourceTransport

    public init(
        configuration: ReceiptVerifierConfiguration, httpClient: HTTPClient, logger: Logger,
        observer: (any RequestObserver)? = nil,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.configuration = configuration
        self.logger = logger
        self.transport = SourceTransport(
            source: Self.source, httpClient: httpClient,
            policy: configuration.requestPolicy, observer: observer, sleep: sleep)
    }

    /// Verifies `receiptData` and reads the latest transaction of each subscription in it.
    /// - Parameter productID: the product the row knows, to pick which subscription's original id is revealed.
    public func verify(receiptData: String, productID: String? = nil) async -> Result<ReceiptAnswer, SourceError> {
        let shared = configuration.productionURL == configuration.sandboxURL
        let first = await post(receiptData, to: configuration.productionURL, asked: .production)
        switch first {
        case .failure(let error):
            return .failure(error)
        case .success(let response) where response.status == 21007 && !shared:
            switch await post(receiptData, to: configuration.sandboxURL, asked: .sandbox) {
            case .failure(let error): return .failure(error)
            case .success(let sandbox): return answer(sandbox, asked: .sandbox, trustBody: false, productID: productID)
            }
        case .success(let response):
            return answer(response, asked: .production, trustBody: shared, productID: productID)
        }
    }

    private func answer(
        _ response: VerifyReceiptResponse, asked: StoreEnvironmentName, trustBody: Bool, productID: String?
    ) -> Result<ReceiptAnswer, SourceError> {
        guard response.status == 0 || response.status == 21006 else {
            return .failure(fetchError("status \(response.status)\(Self.meaning(response.status)) from \(asked.rawValue.lowercased())"))
        }
        guard let bundle = response.receipt?.bundleID, bundle == configuration.bundleID else {
            let named = response.receipt?.bundleID.map { "bundle '\($0.prefix(100))'" } ?? "no bundle_id"
            return .failure(
                SourceError(
                    origin: .appStore, kind: .verification,
                    message: "verifyReceipt: the receipt names \(named), not the configured APP_STORE_BUNDLE_ID"))
        }
        var environment = asked
        if trustBody {
            guard let named = response.environment.flatMap(StoreEnvironmentName.init(rawValue:)) else {
                return .failure(fetchError("answer names no known environment"))
            }
            environment = named
        }
        if let field = ReceiptMapping.unusableDate(response) {
            return .failure(fetchError("answer states a \(field) that is not Unix milliseconds in 1970...2200"))
        }
        return .success(ReceiptMapping.answer(response, environment: environment, productID: productID))
    }

    /// One URL, through `SourceTransport`: 5xx and the retryable statuses are retried, other HTTP statuses and
    /// malformed bodies fail at once. The receipt and the secret travel only in the request body.
    private func post(_ receiptData: String, to url: String, asked: StoreEnvironmentName) async -> Result<
        VerifyReceiptResponse, SourceError
    > {
        let payload: [String: Any] = [
            "receipt-data": receiptData, "password": configuration.sharedSecret, "exclude-old-transactions": true,
        ]
        guard let body = try? JSONSerialization.data(withJSONObject: payload) else {
            return .failure(fetchError("could not encode the request"))
        }
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))
        let environment = asked.rawValue.lowercased()
        var logger = self.logger
        logger[metadataKey: "appstore.environment"] = "\(asked.rawValue)"
        let outcome = await transport.send(request, logger: logger) { answer -> AnswerClass<VerifyReceiptResponse> in
            if answer.status >= 500 { return .retry(problem: "HTTP \(answer.status)") }
            guard (200..<300).contains(answer.status) else { return .fail(reason: "HTTP \(answer.status) from \(environment)") }
            guard let decoded = VerifyReceiptResponse.decode(body: answer.body) else {
                return .fail(reason: "malformed body from \(environment)")
            }
            if Self.isRetryable(decoded) { return .retry(problem: "status \(decoded.status)\(Self.meaning(decoded.status))") }
            return .success(decoded)
        }
        switch outcome {
        case .success(let delivery):
            return .success(delivery.value)
        case .failure(.rejected(_, let reason, _)):
            return .failure(fetchError(reason))
        case .failure(.exhausted(let last, let attempts)):
            return .failure(fetchError("gave up after \(attempts) attempts at \(environment): \(last)"))
        case .failure(let failure):
            return .failure(fetchError(failure.description))
        }
    }

    static func isRetryable(_ response: VerifyReceiptResponse) -> Bool {
        switch response.status {
        case 21005, 21009: true
        case 21100...21199: response.isRetryable ?? true
        default: false
        }
    }

    /// Apple's meaning of a status, for operators.
    static func meaning(_ status: Int) -> String {
        switch status {
        case 21000: " (request was not an HTTP POST)"
        case 21002: " (receipt-data malformed or a temporary issue)"
        case 21003: " (receipt could not be authenticated)"
        case 21004: " (shared secret does not match; check APPLE_SHARED_SECRET)"
        case 21005: " (receipt server temporarily unavailable)"
        case 21007: " (sandbox receipt sent to production)"
        case 21008: " (production receipt sent to sandbox)"
        case 21009: " (internal data access error)"
        case 21010: " (user account not found or deleted)"
        case 21100...21199: " (internal data access error)"
        default: ""
        }
    }

    func fetchError(_ message: String) -> SourceError {
        SourceError(origin: .appStore, kind: .fetch, message: "verifyReceipt: " + message)
    }
}
