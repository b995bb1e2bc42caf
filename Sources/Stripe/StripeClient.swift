import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
import SourceHTTP
import SubreconCore

/// Client for Stripe's subscriptions: `GET /v1/subscriptions?customer=…&status=all&limit=100` (every page, by
/// `has_more` and `starting_after`) and `GET /v1/subscriptions/{id}`, each latest invoice expanded with its payments;
/// the refunds of the current period (`StripeClient+Refunds.swift`). Builds the request, classifies the answer,
/// decodes; `SourceTransport` does the rest (gate, deadline, body limit, retries, observer).
///
/// - 2xx: decoded; a body that is not the expected JSON is an error.
/// - 404 with Stripe's `resource_missing`: absence (no subscriptions); any other 404 is an error.
/// - 401/403: the key was refused (the error names `STRIPE_API_KEY`, never the key).
/// - 429: Stripe names no wait: the own exponential backoff, bounded by the lookup's 429 budget.
/// - 5xx, timeouts, network errors: retried up to `requestPolicy.maxAttempts`, then an error.
public struct StripeClient: Sendable {
    /// The name given to the `RequestObserver`.
    public static let sourceName = "stripe"
    /// Subscriptions per list page (Stripe's maximum).
    public static let pageSize = 100

    let configuration: StripeConfiguration
    let logger: Logger
    let transport: SourceTransport

    public init(
        httpClient: HTTPClient, configuration: StripeConfiguration, logger: Logger,
        observer: (any RequestObserver)? = nil, gate: (any RequestGate)? = nil,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.configuration = configuration
        self.logger = logger
        self.transport = SourceTransport(
            source: Self.sourceName, httpClient: httpClient,
            policy: configuration.requestPolicy, observer: observer, gate: gate, sleep: sleep)
    }

    /// Every subscription of `customerID`, whatever its status, each with all its items (`withAllItems`); empty when
    /// Stripe does not know the customer.
    public func subscriptions(customerID: String) async -> Result<[StripeSubscription], StripeError> {
        let listed = await everyElement(
            base: "/v1/subscriptions?customer=\(Self.encoded(customerID))&status=all&limit=\(Self.pageSize)&\(Self.listExpansion)",
            id: customerID, what: "subscriptions", decode: { try StripeSubscriptionList.decode(body: $0).askedCustomerExpanded() },
            elementID: \.id,
            absenceOnFirstPage: true, tooMany: .tooManyPages(configuration.maxPages))
        guard case .success(let subscriptions) = listed else { return listed }
        var complete: [StripeSubscription] = []
        for subscription in subscriptions {
            switch await withAllItems(subscription) {
            case .failure(let error): return .failure(error)
            case .success(let whole): complete.append(whole)
            }
        }
        return .success(complete)
    }

    /// Every element of a Stripe list (`everyPage`), in order.
    func everyElement<Element>(
        base: String, id: String, what: String, decode: (Data) throws -> StripeList<Element>, elementID: KeyPath<Element, String?>,
        absenceOnFirstPage: Bool = false, tooMany: StripeError? = nil
    ) async -> Result<[Element], StripeError> {
        var all: [Element] = []
        return await everyPage(
            base: base, id: id, what: what, decode: decode, elementID: elementID, absenceOnFirstPage: absenceOnFirstPage,
            tooMany: tooMany, onPage: { all += $0 }
        ).map { _ in all }
    }

    /// Reads a Stripe list page by page (`has_more`, `starting_after`), handing each page's elements to `onPage`;
    /// returns the pages read. At most `maxPages` (default `configuration.maxPages`), beyond is `tooMany`. A 404 is
    /// an error, except Stripe's `resource_missing` on the first page when `absenceOnFirstPage` (then the list is
    /// empty; further on, the cursor vanished). A page without `has_more`, or with `has_more` and no last id to
    /// continue after, or a last id already continued after (a cursor seen before), ends the list as incomplete: an
    /// error, at once; a list is never taken in part (CONTRACT "Hostile answers and bounded work").
    func everyPage<Element>(
        base: String, id: String, what: String, decode: (Data) throws -> StripeList<Element>, elementID: KeyPath<Element, String?>,
        maxPages: Int? = nil, absenceOnFirstPage: Bool = false, tooMany: StripeError? = nil, onPage: ([Element]) -> Void
    ) async -> Result<Int, StripeError> {
        let maxPages = max(1, maxPages ?? configuration.maxPages)
        var after: String?
        var cursors = Set<String>()
        for pages in 1...maxPages {
            var path = base
            if let after { path += "&starting_after=\(Self.encoded(after))" }
            let page: StripeList<Element>
            switch await get(path: path, id: id, absenceIsAnswer: absenceOnFirstPage && after == nil) {
            case .failure(let error): return .failure(error)
            case .success(nil) where absenceOnFirstPage && after == nil: return .success(pages)
            case .success(nil): return .failure(.malformed("\(what) list without a body"))
            case .success(let body?):
                do { page = try decode(body) } catch { return .failure(.malformed("\(what): " + explain(error))) }
            }
            onPage(page.data)
            guard let hasMore = page.hasMore else { return .failure(.malformed("\(what) list incomplete: a page without has_more")) }
            guard hasMore else { return .success(pages) }
            guard let last = page.data.last?[keyPath: elementID], !last.isEmpty else {
                return .failure(.malformed("\(what) list incomplete: has_more without a last id to continue after"))
            }
            guard cursors.insert(last).inserted else {
                return .failure(.malformed("\(what) list incomplete: the cursor '\(String(last.prefix(80)))' was seen before"))
            }
            after = last
        }
        return .failure(tooMany ?? .request("more than \(maxPages) pages of \(what); not judged"))
    }

    /// One subscription by id (`sub_…`); nil when Stripe does not know it.
    public func subscription(id: String) async -> Result<StripeSubscription?, StripeError> {
        switch await get(path: "/v1/subscriptions/" + Self.encoded(id) + "?" + Self.subscriptionExpansion, id: id, absenceIsAnswer: true) {
        case .failure(let error): return .failure(error)
        case .success(nil): return .success(nil)
        case .success(let body?):
            var subscription: StripeSubscription
            do { subscription = try StripeSubscription.decode(body: body) } catch { return .failure(.malformed(explain(error))) }
            subscription.customerExpansionAsked = true  // `expand[]=customer` (`subscriptionExpansion`)
            return await withAllItems(subscription).map { Optional($0) }
        }
    }

    /// The body of a 2xx answer, nil for Stripe's `resource_missing` (404, or 400 naming the customer) when
    /// `absenceIsAnswer`.
    func get(path: String, id: String, absenceIsAnswer: Bool) async -> Result<Data?, StripeError> {
        let url = configuration.baseURL + path
        guard URL(string: url) != nil else { return .failure(.invalidURL) }
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        request.headers.add(name: "Authorization", value: "Bearer \(configuration.apiKey)")
        request.headers.add(name: "Stripe-Version", value: configuration.apiVersion)
        request.headers.add(name: "Accept", value: "application/json")
        var logger = self.logger
        logger[metadataKey: "stripe.id"] = "\(id)"
        switch await transport.send(request, logger: logger, classify: { classify($0, absenceIsAnswer: absenceIsAnswer) }) {
        case .success(let delivery): return .success(delivery.value)
        case .failure(let failure): return .failure(error(for: failure))
        }
    }

    private func classify(_ answer: SourceAnswer, absenceIsAnswer: Bool) -> AnswerClass<Data?> {
        switch answer.status {
        case 200...299:
            return .success(answer.body)
        case 404 where absenceIsAnswer && StripeErrorBody.decode(body: answer.body)?.code == "resource_missing":
            return .success(nil)
        case 400 where absenceIsAnswer && Self.isMissingCustomer(answer.body):
            return .success(nil)
        case 429:
            // Stripe sends no Retry-After; one that is there is honoured, else the own backoff.
            let asked = answer.headers.first(name: "retry-after").flatMap { WaitText.number($0) }
            return .rateLimited(asked.map { .seconds($0, cap: configuration.requestPolicy.maxRateLimitWait) } ?? .unspecified)
        case 500...599:
            return .retry(problem: "HTTP \(answer.status)")
        default:
            return .fail(reason: "HTTP \(answer.status)")
        }
    }

    private func error(for failure: SourceRequestFailure) -> StripeError {
        switch failure {
        case .rejected(let answer, _, _):
            let body = StripeErrorBody.decode(body: answer.body)
            let message = body?.message.map { redact(String($0.prefix(200))) }
            // Stripe's own 401 text repeats part of the key ("Invalid API Key provided: sk_test_****1234"): not kept.
            if answer.status == 401 || answer.status == 403 { return .keyRejected(status: answer.status) }
            var text = "HTTP \(answer.status)"
            if let code = body?.code { text += " (code \(redact(String(code.prefix(40)))))" }
            if let message, !message.isEmpty { text += ": \(message)" }
            return .request(text)
        default:
            return .request(redact(failure.description))
        }
    }

    /// Stripe may answer a list filtered by a customer it does not know with 400 `resource_missing` on `customer`.
    static func isMissingCustomer(_ body: Data) -> Bool {
        guard let error = StripeErrorBody.decode(body: body) else { return false }
        return error.code == "resource_missing" && error.param == "customer"
    }

    /// Removes the API key from text that came from elsewhere (server messages, error descriptions).
    private func redact(_ text: String) -> String {
        let key = configuration.apiKey
        guard !key.isEmpty else { return text }
        return text.replacingOccurrences(of: key, with: "<redacted>")
    }

    func explain(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "unreadable body" }
        switch error {
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not valid JSON" : "unreadable value at \(path(context))"
        case .keyNotFound(let key, let context):
            return "missing key '\(redact(String(key.stringValue.prefix(40))))'"
                + (context.codingPath.isEmpty ? "" : " at \(path(context))")
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "unexpected value at \(path(context))"
        @unknown default:
            return "undecodable body"
        }
    }

    private func path(_ context: DecodingError.Context) -> String {
        let keys = context.codingPath.map { $0.intValue.map(String.init) ?? String($0.stringValue.prefix(40)) }
        return redact(keys.isEmpty ? "(top)" : keys.joined(separator: "."))
    }

    /// `text` percent-encoded so only RFC 3986 unreserved characters stay as they are (a path segment or a query
    /// value alike).
    public static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
