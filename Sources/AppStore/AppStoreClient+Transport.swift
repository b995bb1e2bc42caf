import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SubreconCore

extension AppStoreClient {
    enum FetchOutcome {
        case body(Data)
        /// 4040010: the id is unknown in this environment.
        case notFound
    }

    /// `GET /inApps/v1/subscriptions/{id}` in one environment, with retries.
    func fetchStatuses(transactionID: String, environment: StoreEnvironment) async -> Result<FetchOutcome, SourceError> {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove("/")
        let encodedID = transactionID.addingPercentEncoding(withAllowedCharacters: allowed) ?? transactionID
        let url = configuration.baseURL(for: environment) + "/inApps/v1/subscriptions/" + encodedID
        var attempt = 0
        var failures = 0  // 5xx, network errors, retryable codes: bounded by maxAttempts
        var rateLimited = RateLimitChain(budget: configuration.rateLimitBudget)  // 429s: bounded by time, not attempts
        var lastProblem = "no attempt made"
        while failures < configuration.maxAttempts {
            attempt += 1
            if Task.isCancelled { return .failure(fetchError("cancelled")) }
            do {
                try await gate?.acquire(source: Self.source)
            } catch {
                return .failure(fetchError("request not permitted: \(error)"))
            }
            let token: AppStoreToken
            do {
                token = try await tokens.token(now: now())
            } catch {
                return .failure(fetchError("could not sign the API token"))
            }
            var request = HTTPClientRequest(url: url)
            request.method = .GET
            request.headers.add(name: "Authorization", value: "Bearer " + token.value)
            request.headers.add(name: "Accept", value: "application/json")
            let retried = attempt > 1
            let status: Int
            let body: Data
            let headers: HTTPHeaders
            do {
                // One deadline for the whole request, headers and body (a trickled body cannot hold it longer).
                let response = try await httpClient.collect(
                    request, deadline: configuration.requestTimeout, maxBodyBytes: Self.maxBodyBytes)
                status = response.status
                headers = response.headers
                body = response.body
            } catch {
                observer?.requestFinished(source: Self.source, status: nil, retried: retried)
                lastProblem = "network error (\(type(of: error)))"
                logger.debug("app store request failed", metadata: ["http.attempt": "\(attempt)", "error": "\(error)"])
                failures += 1
                if failures < configuration.maxAttempts { await backoff(attempt: failures) }
                continue
            }
            observer?.requestFinished(source: Self.source, status: status, retried: retried)
            logger.debug(
                "app store request finished",
                metadata: ["http.status": "\(status)", "http.attempt": "\(attempt)", "appstore.environment": "\(environment.rawValue)"])
            if (200..<300).contains(status) { return .success(.body(body)) }
            if status == 401 {
                return .failure(
                    fetchError(
                        "HTTP 401: the API token was rejected; check APP_STORE_ISSUER_ID, APP_STORE_KEY_ID, "
                            + "APP_STORE_PRIVATE_KEY and APP_STORE_BUNDLE_ID"))
            }
            let payload = try? AppStoreJSON.decode(AppStoreErrorPayload.self, from: body)
            let code = payload?.errorCode
            if code == AppStoreErrorPayload.transactionIDNotFound { return .success(.notFound) }
            let named = code.map { "HTTP \(status), error \($0)" } ?? "HTTP \(status)"
            if status == 429 {
                let asked = Self.requestedWait(retryAfter: headers.first(name: "Retry-After"), now: now(), cap: configuration.maxRateLimitWait)
                // Every 429 lowers the shared rate; a granted wait also pauses everybody for it.
                let step = rateLimited.next(asked, ownBackoff: { backoffDuration(attempt: $0) })
                if case .wait(let wait) = step {
                    await gate?.backOff(source: Self.source, for: wait)
                    try? await sleep(wait)
                } else {
                    await gate?.backOff(source: Self.source, for: .zero)
                }
                switch step {
                case .wait: break
                case .tooLong(let seconds):
                    return .failure(
                        fetchError(
                            "rate limited (\(named)): Apple "
                                + RequestedWait.tooLongDescription(seconds: seconds, cap: configuration.maxRateLimitWait)
                                + " (Retry-After); retried on the next run"))
                case .budgetSpent:
                    return .failure(fetchError("rate limited (\(named)) until this lookup's wait budget ran out after \(attempt) attempts"))
                }
                continue
            }
            if status >= 500 || code.map(AppStoreErrorPayload.retryableCodes.contains) == true {
                lastProblem = named
                failures += 1
                if failures < configuration.maxAttempts { await backoff(attempt: failures) }
                continue
            }
            let message = payload?.errorMessage.map { ": \($0)" } ?? ""
            return .failure(fetchError(named + message))
        }
        return .failure(fetchError("gave up after \(attempt) attempts: \(lastProblem)"))
    }

    private func backoff(attempt: Int) async {
        try? await sleep(backoffDuration(attempt: attempt))
    }

    /// Exponential backoff with jitter after the `attempt`-th failure (1-based), capped by `maxRetryWait`.
    private func backoffDuration(attempt: Int) -> Duration {
        let base = configuration.baseBackoff * (1 << min(max(attempt - 1, 0), 10))
        return min(base * Double.random(in: 0.5...1.0), configuration.maxRetryWait)
    }

    /// What a 429's `Retry-After` asks for: an absolute Unix time in milliseconds (apple.md §1.9; an HTTP-date is
    /// read too), judged against `cap`. Never traps: `inf`, huge values and instants far ahead are `.tooLong`; an
    /// instant already past is a wait of zero; anything unreadable is `.unspecified` (the client's own backoff).
    static func requestedWait(retryAfter value: String?, now: Date, cap: Duration) -> RequestedWait {
        guard let value else { return .unspecified }
        if let milliseconds = WaitText.number(value) { return .untilUnixMilliseconds(milliseconds, now: now, cap: cap) }
        if let date = WaitText.httpDate(value) { return .until(date, now: now, cap: cap) }
        return .unspecified
    }
}
