import Foundation
import SourceHTTP
import SubreconCore

/// Why a RevenueCat fetch failed. `description` is written for the operator and never contains the API key.
public enum RevenueCatError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A non-retryable HTTP status (or the last of several retryable ones), with RevenueCat's error code and message.
    case http(status: Int, code: String?, message: String?, attempts: Int)
    /// Still rate limited (429) when the lookup's time budget for 429 waits (`requestPolicy.rateLimitBudget`) ran out.
    case rateLimited(attempts: Int)
    /// A 429 asked for a wait longer than `requestPolicy.maxRateLimitWait` (`description` says how long): given up for this run.
    case rateLimitWaitTooLong(seconds: Double, cap: Duration, attempts: Int)
    /// The last attempt did not finish within the request timeout.
    case timedOut(attempts: Int)
    /// The last attempt failed below HTTP (connection refused, reset, DNS, ...).
    case network(String, attempts: Int)
    /// A 200/201 body that is not the expected JSON.
    case malformedJSON(String)
    /// The body exceeded the configured limit.
    case bodyTooLarge(limit: Int)
    /// The base URL and user id do not form a URL.
    case invalidURL
    /// Given up without an answer: a wait would have ended past the lookup's deadline (`LookupDeadline`), or
    /// RevenueCat was declared down for the rest of the run; the text says which.
    case givenUp(String)
    /// The request gate refused or the task was cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .http(let status, let code, let message, let attempts):
            var text = "HTTP \(status)"
            if let code { text += " (code \(code))" }
            if let message, !message.isEmpty { text += ": \(message)" }
            return text + Self.after(attempts)
        case .rateLimited(let attempts):
            return "rate limited (HTTP 429) until this lookup's wait budget ran out" + Self.after(attempts)
        case .rateLimitWaitTooLong(let seconds, let cap, let attempts):
            return "rate limited (HTTP 429): RevenueCat "
                + RequestedWait.tooLongDescription(seconds: seconds, cap: cap) + "; retried on the next run" + Self.after(attempts)
        case .timedOut(let attempts):
            return "timed out" + Self.after(attempts)
        case .network(let reason, let attempts):
            return "network error: \(reason)" + Self.after(attempts)
        case .malformedJSON(let reason):
            return "malformed JSON: \(reason)"
        case .bodyTooLarge(let limit):
            return "response body larger than \(limit) bytes"
        case .invalidURL:
            return "invalid RevenueCat URL for this user id"
        case .givenUp(let reason):
            return reason
        case .cancelled:
            return "cancelled"
        }
    }

    private static func after(_ attempts: Int) -> String {
        attempts > 1 ? " after \(attempts) attempts" : ""
    }
}

extension RevenueCatError {
    /// The error a request that failed in the shared HTTP layer is, for either RevenueCat API: an answer is judged by
    /// that API's `httpError`, a network reason is `redact`ed of its key.
    init(
        _ failure: SourceRequestFailure, waitCap: Duration, httpError: (Int, Data, Int) -> RevenueCatError,
        redact: (String) -> String
    ) {
        switch failure {
        case .rejected(let answer, _, let attempts), .exhausted(.answer(let answer, _), let attempts):
            self = httpError(answer.status, answer.body, attempts)
        case .exhausted(.timedOut, let attempts):
            self = .timedOut(attempts: attempts)
        case .exhausted(.network(let reason), let attempts):
            self = .network(redact(reason), attempts: attempts)
        case .rateLimitWaitTooLong(let seconds, _, _, let attempts):
            self = .rateLimitWaitTooLong(seconds: seconds, cap: waitCap, attempts: attempts)
        case .rateLimitBudgetSpent(_, let attempts):
            self = .rateLimited(attempts: attempts)
        case .bodyTooLarge(let limit, _):
            self = .bodyTooLarge(limit: limit)
        case .beyondDeadline(let reason, _), .sourceDown(let reason, _):
            self = .givenUp(reason)
        case .notPermitted, .requestNotBuilt, .cancelled:
            self = .cancelled
        }
    }
}
