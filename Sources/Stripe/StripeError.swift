/// Why a Stripe lookup failed. `description` is written for the operator and never contains the API key.
public enum StripeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// 401/403: the key was refused (wrong, revoked, or a restricted key without read access to subscriptions).
    case keyRejected(status: Int)
    /// Any other failure of the HTTP lookup (status, 5xx after retries, timeouts, network, 429 budget, body size).
    case request(String)
    /// A 2xx body that is not the expected JSON.
    case malformed(String)
    /// The customer has more subscriptions than `maxPages` pages hold.
    case tooManyPages(Int)
    /// The events feed's window holds more than this many pages of events (`maxEventPages`).
    case tooManyEventPages(Int)
    /// The base URL and id do not form a URL.
    case invalidURL

    public var description: String {
        switch self {
        case .keyRejected(let status):
            return
                "HTTP \(status): STRIPE_API_KEY was rejected (check it is a secret key, or a restricted key with read access to subscriptions, invoices, charges and events)"
        case .request(let reason): return reason
        case .malformed(let reason): return "malformed Stripe answer: \(reason)"
        case .tooManyPages(let pages): return "more than \(pages) pages of subscriptions for one customer; not judged"
        case .tooManyEventPages(let pages):
            return "more than \(pages) pages of events in the feed's window; the feed is not read in part"
        case .invalidURL: return "invalid Stripe URL for this id"
        }
    }
}
