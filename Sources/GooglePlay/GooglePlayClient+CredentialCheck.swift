import AsyncHTTPClient
import Foundation
import NIOHTTP1
import SourceHTTP
import SubreconCore

extension GooglePlayClient {
    /// `subrecon doctor`'s read of the Google Play Developer API (docs/CONTRACT.md, "subrecon doctor"): an access token
    /// for the service account (the OAuth exchange the night makes), then `GET …/applications/{package}/purchases/
    /// voidedpurchases?type=1&maxResults=1`, which Google answers only for an account granted the app's financial data
    /// in Play Console (the night's voided purchases feed needs it too). Lists at most one voided order; changes
    /// nothing. A refusal is named from Google's own body (`reason` of `error.errors`: `permissionDenied`,
    /// `projectNotLinked`, `accessNotConfigured`, `applicationNotFound`); a body naming none is said as it came.
    public func credentialCheck() async -> CredentialCheck {
        let what = "GET …/applications/\(configuration.packageName)/purchases/voidedpurchases?type=1&maxResults=1"
        let access: GoogleAccessToken
        do {
            access = try await tokens.token()
        } catch let error as GoogleTokenError {
            return tokenCheck(error)
        } catch {
            return CredentialCheck(Self.source, .unreachable, "OAuth token endpoint: no answer (cancelled)")
        }
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#%;")
        let package = configuration.packageName.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
        let url =
            configuration.baseURL + "/androidpublisher/v3/applications/" + package + "/purchases/voidedpurchases?type=1&maxResults=1"
        let outcome = await transport.send(
            logger: logger, request: { _ in Self.authorizedGET(url, access) }, classify: probeClass)
        switch outcome {
        case .failure(let failure): return .failed(Self.source, asking: what, failure)
        case .success(let delivery): return judgeProbe(delivery.value, asking: what)
        }
    }

    /// The token endpoint's refusal is the service account's key (78); no answer is 69.
    private func tokenCheck(_ error: GoogleTokenError) -> CredentialCheck {
        let account = configuration.serviceAccount.clientEmail
        switch error.cause {
        case .refused(let status, let code):
            return CredentialCheck(
                Self.source, .misconfigured,
                "Google's OAuth token endpoint refused the service account \(account) (HTTP \(status)\(code.map { ", \($0)" } ?? "")): "
                    + "the key in GOOGLE_PLAY_SERVICE_ACCOUNT was deleted or disabled, or is not this account's; create a new JSON key")
        case .unsigned:
            return CredentialCheck(
                Self.source, .misconfigured,
                "the service account assertion could not be signed: check GOOGLE_PLAY_SERVICE_ACCOUNT's private_key")
        case .unanswered:
            return CredentialCheck(Self.source, .unreachable, "OAuth token endpoint: no answer: \(error.description)")
        }
    }

    /// 429 waits and 5xx are retried; every other answer is judged.
    @Sendable private func probeClass(_ answer: SourceAnswer) -> AnswerClass<SourceAnswer> {
        switch answer.status {
        case 429: return .rateLimited(Self.requestedWait(answer, cap: transport.policy.maxRateLimitWait))
        case 500...599: return .retry(problem: Self.named(answer))
        default: return .success(answer)
        }
    }

    private func judgeProbe(_ answer: SourceAnswer, asking what: String) -> CredentialCheck {
        let account = configuration.serviceAccount.clientEmail
        if answer.status == 200 {
            return CredentialCheck(
                Self.source, .holds,
                "\(what) answered 200: the service account \(account) got an access token and reads the app's financial data")
        }
        let detail = GoogleJSON.error(answer.body)?.error
        let reasons = (detail?.errors ?? []).compactMap { CredentialCheck.token($0.reason) }
        let status = CredentialCheck.token(detail?.status)
        let named = "HTTP \(answer.status)" + ((reasons.first ?? status).map { " (\($0))" } ?? " without Google's error body")
        let fix: String
        if reasons.contains("permissionDenied") {
            fix =
                "the service account \(account) is not granted this app in Play Console: Users and permissions → invite it "
                + "with \"View financial data, orders and cancellation survey responses\" (and \"Manage orders and subscriptions\"); "
                + "a new grant can take up to 24 h to reach the API"
        } else if reasons.contains("projectNotLinked") {
            fix =
                "the service account's Google Cloud project is not linked to the Play Console developer account (Play Console → API access)"
        } else if reasons.contains("accessNotConfigured") {
            fix = "the Google Play Android Developer API is not enabled in the service account's Google Cloud project"
        } else if reasons.contains("applicationNotFound") {
            fix = "Google knows no app \(configuration.packageName) for this account: check GOOGLE_PLAY_PACKAGE_NAME"
        } else {
            fix = "not an answer that proves the service account's access; check GOOGLE_PLAY_SERVICE_ACCOUNT and its Play Console grant"
        }
        return CredentialCheck(Self.source, .misconfigured, "\(what) answered \(named): \(fix)")
    }
}
