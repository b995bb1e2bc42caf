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
        var lastProblem = "no attempt made"
        while attempt < configuration.maxAttempts {
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
                if attempt < configuration.maxAttempts { await backoff(attempt: attempt) }
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
                lastProblem = "rate limited (\(named))"
                if attempt < configuration.maxAttempts { await waitForRetryAfter(headers, attempt: attempt) }
                continue
            }
            if status >= 500 || code.map(AppStoreErrorPayload.retryableCodes.contains) == true {
                lastProblem = named
                if attempt < configuration.maxAttempts { await backoff(attempt: attempt) }
                continue
            }
            let message = payload?.errorMessage.map { ": \($0)" } ?? ""
            return .failure(fetchError(named + message))
        }
        return .failure(fetchError("gave up after \(attempt) attempts: \(lastProblem)"))
    }

    private func backoff(attempt: Int) async {
        let base = configuration.baseBackoff * (1 << min(attempt - 1, 10))
        let jittered = base * Double.random(in: 0.5...1.0)
        try? await sleep(min(jittered, configuration.maxRetryWait))
    }

    /// `Retry-After` is an absolute Unix time in milliseconds (apple.md §1.9); waits until then, capped.
    private func waitForRetryAfter(_ headers: HTTPHeaders, attempt: Int) async {
        guard let value = headers.first(name: "Retry-After"), let milliseconds = Int64(value.trimmingCharacters(in: .whitespaces)) else {
            await backoff(attempt: attempt)
            return
        }
        let nowMilliseconds = Int64((now().timeIntervalSince1970 * 1000).rounded())
        let wait = min(Duration.milliseconds(max(0, milliseconds - nowMilliseconds)), configuration.maxRetryWait)
        await gate?.backOff(source: Self.source, for: wait)
        try? await sleep(wait)
    }
}
