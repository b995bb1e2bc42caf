import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SourceHTTP
import SubreconCore

/// An OAuth access token and until when it may be used. `description` hides the token.
public struct GoogleAccessToken: Sendable, CustomStringConvertible {
    /// Secret: send it, never log it.
    public let value: String
    /// Reused until this instant: the stated `expires_in` (capped at one hour) less a minute's margin.
    public let reuseUntil: Date

    public init(value: String, reuseUntil: Date) {
        self.value = value
        self.reuseUntil = reuseUntil
    }

    public var description: String { "GoogleAccessToken(<redacted>, reuse until: \(reuseUntil))" }

    /// Longest lifetime believed from `expires_in` (Google issues one-hour tokens).
    public static let maxLifetime: Int64 = 3600
    /// Refresh this long before the stated expiry.
    public static let margin: Int64 = 60

    /// The reuse limit of a token obtained at `obtained` with `expiresIn` seconds (saturated, capped at one hour):
    /// `obtained + min(expiresIn, 3600) - 60`; a token stated to live a minute or less (or without `expires_in`) is
    /// used for the request that asked for it only.
    public static func reuseUntil(obtained: Date, expiresIn: Int64?) -> Date {
        let lifetime = min(max(expiresIn ?? 0, 0), maxLifetime)
        return obtained.addingTimeInterval(TimeInterval(max(lifetime - margin, 0)))
    }
}

/// Why no access token could be obtained. Operator text; never contains the key, the assertion or a token.
public struct GoogleTokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What stood in the way: the token endpoint refused the assertion, it could not be signed, or no answer came.
    public enum Cause: Sendable, Hashable {
        /// The endpoint answered this status, with the OAuth error code when its body named one (`invalid_grant`).
        case refused(status: Int, code: String?)
        /// The assertion could not be signed with the key.
        case unsigned
        /// No answer to judge: network, timeouts, 5xx, 429 past its budget, the deadline.
        case unanswered
    }

    public var description: String
    public var cause: Cause
    public init(_ description: String, cause: Cause = .unanswered) {
        self.description = description
        self.cause = cause
    }
}

/// The run's access token: fetched once, reused until shortly before it expires, and refreshed by one caller
/// while every concurrent caller waits for that same refresh (an actor holding the refresh in flight).
///
/// Each caller's wait is its own: a caller whose task is cancelled (its user's deadline passed) stops waiting at
/// once, whatever the shared refresh is doing. The refresh runs under the deadline of the caller that started it
/// (`LookupDeadline`, inherited), so it never outlives that either: a token endpoint asking to wait past it fails
/// the refresh, and every caller waiting on it, at once.
public actor GoogleAccessTokens {
    public typealias Fetch = @Sendable (_ now: Date) async throws -> GoogleAccessToken
    private let fetch: Fetch
    private let now: @Sendable () -> Date
    private var current: GoogleAccessToken?
    private var refreshing: Task<Void, Never>?
    private var waiters: [UInt64: CheckedContinuation<GoogleAccessToken, any Error>] = [:]
    private var nextWaiter: UInt64 = 0
    /// Token requests made (tests).
    public private(set) var refreshes = 0

    public init(now: @escaping @Sendable () -> Date = { Date() }, fetch: @escaping Fetch) {
        self.fetch = fetch
        self.now = now
    }

    /// A usable token: the cached one, the refresh already in flight, or a new one. Throws `CancellationError`
    /// as soon as the caller is cancelled.
    public func token() async throws -> GoogleAccessToken {
        if let current, now() < current.reuseUntil { return current }
        try Task.checkCancellation()
        if refreshing == nil { startRefresh() }
        let id = nextWaiter
        nextWaiter += 1
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    waiters[id] = continuation
                }
            }
        } onCancel: {
            Task { await self.stopWaiting(id) }
        }
    }

    /// The API refused `value` (401): forget it, unless a newer token already replaced it.
    public func invalidate(_ value: String) {
        if current?.value == value { current = nil }
    }

    private func startRefresh() {
        refreshes += 1
        let (fetch, instant) = (self.fetch, now())
        refreshing = Task {
            let result: Result<GoogleAccessToken, any Error>
            do { result = .success(try await fetch(instant)) } catch { result = .failure(error) }
            self.finishRefresh(result)
        }
    }

    private func finishRefresh(_ result: Result<GoogleAccessToken, any Error>) {
        refreshing = nil
        if case .success(let token) = result { current = token }
        let waiting = waiters
        waiters.removeAll()
        for continuation in waiting.values { continuation.resume(with: result) }
    }

    private func stopWaiting(_ id: UInt64) {
        waiters.removeValue(forKey: id)?.resume(throwing: CancellationError())
    }
}

extension GoogleAccessTokens {
    /// The production fetch: the signed assertion POSTed form-encoded to the key's `token_uri` through
    /// `transport` (its retries for 5xx, 429 and network errors). Failures name the HTTP status and OAuth error
    /// code, never the assertion or a token.
    static func exchange(
        signer: GoogleJWTSigner, transport: SourceTransport, logger: Logger
    ) -> Fetch {
        { now in
            let assertion: String
            do { assertion = try signer.assertion(now: now) } catch {
                throw GoogleTokenError("could not sign the service account assertion", cause: .unsigned)
            }
            var form = URLComponents()
            form.queryItems = [
                URLQueryItem(name: "grant_type", value: "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                URLQueryItem(name: "assertion", value: assertion),
            ]
            let body = form.percentEncodedQuery ?? ""
            var request = HTTPClientRequest(url: signer.audience)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.headers.add(name: "Accept", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
            let outcome = await transport.send(request, logger: logger) { answer -> AnswerClass<GoogleTokenResponse> in
                switch answer.status {
                case 200:
                    guard let decoded = GoogleJSON.token(answer.body), decoded.accessToken?.isEmpty == false else {
                        return .fail(reason: "HTTP 200 without an access_token")
                    }
                    return .success(decoded)
                case 429:
                    return .rateLimited(GooglePlayClient.requestedWait(answer, cap: transport.policy.maxRateLimitWait))
                case 500...599:
                    return .retry(problem: "HTTP \(answer.status)")
                default:
                    let code = GoogleJSON.token(answer.body)?.error.map { String($0.prefix(60)) }
                    return .fail(
                        reason: "HTTP \(answer.status)" + (code.map { " (\($0))" } ?? "")
                            + ": the service account was refused; check GOOGLE_PLAY_SERVICE_ACCOUNT")
                }
            }
            switch outcome {
            case .success(let delivery):
                return GoogleAccessToken(
                    value: delivery.value.accessToken ?? "",
                    reuseUntil: GoogleAccessToken.reuseUntil(obtained: now, expiresIn: delivery.value.expiresIn))
            case .failure(.rejected(let answer, let reason, let attempts)):
                let code = GoogleJSON.token(answer.body)?.error.flatMap { CredentialCheck.token($0) }
                let text = SourceRequestFailure.rejected(answer, reason: reason, attempts: attempts).description
                throw GoogleTokenError(text, cause: .refused(status: answer.status, code: code))
            case .failure(let failure):
                throw GoogleTokenError(failure.description)
            }
        }
    }
}
