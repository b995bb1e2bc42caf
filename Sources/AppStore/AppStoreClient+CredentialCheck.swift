import Foundation
import NIOHTTP1
import SourceHTTP
import SubreconCore

extension AppStoreClient {
    /// The transaction id whose history `credentialCheck` asks for: numeric like Apple's, held by no purchase.
    public static let probeTransactionID = "1000000000000000"

    /// `subrecon doctor`'s read of the App Store Server API (docs/CONTRACT.md, "subrecon doctor"): `GET
    /// /inApps/v2/history/{probeTransactionID}` in the first environment a lookup asks, under the job's signed token.
    /// Apple answers it only for a token it accepts: 404 with error 4040010 (no such transaction; 400 with 4000006, an
    /// id it calls invalid, likewise) proves the key, issuer, key id and bundle id; 401 (no body) refuses them;
    /// 4000002 / 4040003 name no app for the bundle id. Reads nothing of any customer, changes nothing. Any other
    /// answer, or one without an error code, proves nothing: it is said as it came (status, code).
    public func credentialCheck() async -> CredentialCheck {
        let environment = lookupEnvironments().first?.environment ?? configuration.environment
        let path = "/inApps/v2/history/" + Self.probeTransactionID
        let url = configuration.baseURL(for: environment) + path
        let what = "GET \(path) (\(environment.rawValue))"
        let outcome = await transport.send(
            logger: logger, request: { _ in try await authorizedRequest(url: url, method: .GET) }, classify: probeClass)
        switch outcome {
        case .failure(let failure): return .failed(Self.source, asking: what, failure)
        case .success(let delivery): return judgeProbe(delivery.value, asking: what)
        }
    }

    /// 429 waits, 5xx and Apple's retryable codes are retried; every other answer is judged.
    private func probeClass(_ answer: SourceAnswer) -> AnswerClass<SourceAnswer> {
        let code = (try? AppStoreJSON.decode(AppStoreErrorPayload.self, from: answer.body))?.errorCode
        if answer.status == 429 {
            return .rateLimited(
                Self.requestedWait(
                    retryAfter: answer.headers.first(name: "Retry-After"), now: now(), cap: configuration.requestPolicy.maxRateLimitWait))
        }
        if answer.status >= 500 || code.map(AppStoreErrorPayload.retryableCodes.contains) == true {
            return .retry(problem: code.map { "HTTP \(answer.status), error \($0)" } ?? "HTTP \(answer.status)")
        }
        return .success(answer)
    }

    private func judgeProbe(_ answer: SourceAnswer, asking what: String) -> CredentialCheck {
        let code = (try? AppStoreJSON.decode(AppStoreErrorPayload.self, from: answer.body))?.errorCode
        let bundle = configuration.bundleID
        let accepted = "Apple accepted the API token (APP_STORE_KEY_ID \(configuration.keyID), APP_STORE_ISSUER_ID) for \(bundle)"
        switch (answer.status, code) {
        case (200..<300, _):
            return CredentialCheck(Self.source, .holds, "\(what) answered \(answer.status): \(accepted)")
        case (404, AppStoreErrorPayload.transactionIDNotFound), (400, Self.invalidTransactionID):
            return CredentialCheck(
                Self.source, .holds, "\(what) answered \(answer.status) with error \(code ?? 0) (no such transaction): \(accepted)")
        case (401, _):
            return CredentialCheck(
                Self.source, .misconfigured,
                "\(what) answered 401: Apple refused the API token: check APP_STORE_ISSUER_ID, APP_STORE_KEY_ID, "
                    + "APP_STORE_PRIVATE_KEY (an In-App Purchase key of the app's team) and APP_STORE_BUNDLE_ID; an app "
                    + "with no production release is refused in production (APP_STORE_ENVIRONMENT=sandbox)")
        case (_, Self.invalidAppIdentifier), (_, Self.appNotFound):
            return CredentialCheck(
                Self.source, .misconfigured,
                "\(what) answered \(answer.status) with error \(code ?? 0): Apple knows no app \(bundle): check APP_STORE_BUNDLE_ID")
        default:
            let named = code.map { "HTTP \(answer.status) with error \($0)" } ?? "HTTP \(answer.status) without an error code"
            return CredentialCheck(
                Self.source, .misconfigured, "\(what) answered \(named): not an answer that proves the key; check the App Store variables")
        }
    }

    /// InvalidTransactionIdError: the id is refused as malformed, after the token was accepted.
    static let invalidTransactionID: Int64 = 4_000_006
    /// InvalidAppIdentifierError.
    static let invalidAppIdentifier: Int64 = 4_000_002
    /// AppNotFoundError.
    static let appNotFound: Int64 = 4_040_003
}
