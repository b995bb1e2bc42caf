import Foundation

/// One item of a simulated Stripe subscription: a recurring price of a product.
public struct SimulatedStripeItem: Sendable, Hashable {
    public var id: String
    public var priceID: String
    /// nil: the price names no product (a hostile or odd answer).
    public var productID: String?
    /// Minor units; nil is written as `null` (a tiered or custom price).
    public var unitAmount: Int64?
    public var currency: String
    public var quantity: Int
    public var interval: String
    /// Write `price.product` as an expanded object (`{"id": …, "object": "product"}`) instead of the id.
    public var expandedProduct: Bool

    public init(
        id: String, priceID: String, productID: String?, unitAmount: Int64? = 999, currency: String = "usd", quantity: Int = 1,
        interval: String = "month", expandedProduct: Bool = false
    ) {
        self.id = id
        self.priceID = priceID
        self.productID = productID
        self.unitAmount = unitAmount
        self.currency = currency
        self.quantity = quantity
        self.interval = interval
        self.expandedProduct = expandedProduct
    }
}

/// One simulated Stripe subscription; dates are written as Unix seconds.
public struct SimulatedStripeSubscription: Sendable, Hashable {
    public var id: String
    public var status: String
    /// nil: the key is left out.
    public var livemode: Bool?
    public var cancelAtPeriodEnd: Bool
    public var cancelAt: Date?
    public var canceledAt: Date?
    public var endedAt: Date?
    public var trialEnd: Date?
    public var created: Date
    public var currentPeriodStart: Date
    public var currentPeriodEnd: Date
    public var items: [SimulatedStripeItem]
    /// nil: `latest_invoice` is `null`.
    public var latestInvoice: SimulatedStripeInvoice?
    /// The subscription's `metadata` (`user_id`: the buyer's account, CONTRACT "Whose purchase it is").
    public var metadata: [String: String] = [:]

    public init(
        id: String, status: String, livemode: Bool? = true, cancelAtPeriodEnd: Bool = false, cancelAt: Date? = nil,
        canceledAt: Date? = nil, endedAt: Date? = nil, trialEnd: Date? = nil, created: Date? = nil,
        currentPeriodStart: Date, currentPeriodEnd: Date, items: [SimulatedStripeItem], latestInvoice: SimulatedStripeInvoice? = nil
    ) {
        self.id = id
        self.status = status
        self.livemode = livemode
        self.cancelAtPeriodEnd = cancelAtPeriodEnd
        self.cancelAt = cancelAt
        self.canceledAt = canceledAt
        self.endedAt = endedAt
        self.trialEnd = trialEnd
        self.created = created ?? currentPeriodStart
        self.currentPeriodStart = currentPeriodStart
        self.currentPeriodEnd = currentPeriodEnd
        self.items = items
        self.latestInvoice = latestInvoice
    }
}

/// Where the simulated Stripe writes `current_period_start`/`_end`.
public enum StripePeriodLayout: Sendable, Hashable {
    /// On each item (API versions from `2025-03-31.basil`).
    case items
    /// On the subscription (older API versions).
    case subscription
}

/// A scripted failure of the simulated Stripe.
public enum StripeFault: Sendable, Hashable {
    /// This status with a Stripe error body (`api_error` for 5xx).
    case status(Int)
    /// 429 with Stripe's `rate_limit` error body and no `Retry-After`.
    case rateLimited
    /// 200 with a body that is not JSON.
    case malformedBody
    /// Exactly this answer.
    case raw(status: Int, headers: [String: String], body: Data)
    /// The normal answer, written one byte at a time with `pause` between bytes.
    case trickle(pause: Duration)
    /// The normal answer (queued before another fault, it lets the first requests through: a later page fails).
    case normal
}

/// One request as the simulated Stripe saw it.
public struct StripeRecordedRequest: Sendable, Hashable {
    public var path: String
    public var query: [String: String]
    /// Header names lower-cased.
    public var headers: [String: String]
    /// Every value of each query parameter, in the order sent (`expand[]` is repeated).
    public var queryValues: [String: [String]] = [:]
}

/// Stripe's `GET /v1/subscriptions` (list by customer, `status=all`, `limit`, `starting_after`) and
/// `GET /v1/subscriptions/{id}` on loopback, speaking Stripe's shapes (`object`, `livemode`, `items.data[].price`,
/// `has_more`), with scripted faults. The latest invoice is expanded with its payments when asked
/// (`expand[]=data.latest_invoice.payments`, `expand[]=latest_invoice.payments`); `GET /v1/invoice_payments?invoice=…`,
/// `GET /v1/charges?payment_intent=…` and `GET /v1/charges/{id}` (`expand[]=data.refunds` / `refunds`: the newest
/// 10, `has_more` beyond) and `GET /v1/refunds?charge=…` serve the invoices' payments and the charges given with
/// `setCharges`. `GET /v1/invoices` and the unfiltered lists of charges, refunds and checkout sessions serve the whole
/// account (`StripeSimulator+Account.swift`: what `subrecon doctor` reads).
///
/// Checks `Authorization: Bearer <apiKey>` (401 with Stripe's error body otherwise) and, when `apiVersion` is set,
/// the `Stripe-Version` header (400 otherwise); a key restricted with `restrictKey(denying:)` is refused 403 on the
/// lists it may not read, with Stripe's message. Unknown customers and subscriptions are 404 `resource_missing`.
/// Lists in the order subscriptions were given.
public actor StripeSimulator: SimulatorRoute {
    public let apiKey: String
    /// The `Stripe-Version` requests must carry; nil accepts any (or none).
    public let apiVersion: String?
    var customers: [String: [SimulatedStripeSubscription]] = [:]
    /// Each customer's `metadata`, written when the customer object is expanded (`expand[]=data.customer`).
    var customerMetadata: [String: [String: String]] = [:]
    /// Answer every `expand[]=data.customer` / `expand[]=customer` with the customer's bare id (`"cus_…"`) instead of
    /// the object (a hostile answer: an expansion asked for and not made). Off by default.
    var ignoresCustomerExpansion = false
    /// The customers in the order they were first given (the inventory lists in this order).
    var customerOrder: [String] = []
    private var events: [SimulatedStripeEvent] = []
    var charges: [SimulatedStripeCharge] = []
    var checkoutSessions: [String: [SimulatedStripeCheckoutSession]] = [:]
    var layout: StripePeriodLayout = .items
    /// Items a subscription embeds at most (`items.has_more` beyond); nil: all.
    var embeddedItemLimit: Int?
    private var livemodeDefault = true
    private var faults: [String: [(fault: StripeFault, remaining: Int?)]] = [:]
    private var recorded: [StripeRecordedRequest] = []
    private var requests = 0
    private var rateLimitedAnswers = 0
    private var downStatus: Int?
    /// What the key may not read (a restricted key's missing permissions): 403 as Stripe answers it.
    private var deniedReads: Set<StripeReadPermission> = []

    public init(apiKey: String, apiVersion: String? = "2025-03-31.basil") {
        self.apiKey = apiKey
        self.apiVersion = apiVersion
    }

    // MARK: - Set-up

    /// Replaces the customer's subscriptions (an empty list: a known customer without any).
    public func setSubscriptions(_ subscriptions: [SimulatedStripeSubscription], forCustomer customerID: String) {
        if customers[customerID] == nil && !customerOrder.contains(customerID) { customerOrder.append(customerID) }
        customers[customerID] = subscriptions
    }

    /// Sets the customer's `metadata` (`user_id`: the buyer's account, CONTRACT "Whose purchase it is").
    public func setCustomerMetadata(_ metadata: [String: String], forCustomer customerID: String) {
        customerMetadata[customerID] = metadata
    }

    public func removeCustomer(_ customerID: String) { customers[customerID] = nil }

    /// Replaces the events `GET /v1/events` lists (newest first by `created`, ties in reverse order given).
    public func setEvents(_ events: [SimulatedStripeEvent]) { self.events = events }

    /// Adds events to the list.
    public func addEvents(_ events: [SimulatedStripeEvent]) { self.events += events }

    /// Replaces the charges `GET /v1/charges` serves (listed newest first by `created`).
    public func setCharges(_ charges: [SimulatedStripeCharge]) { self.charges = charges }

    /// Adds charges, replacing any with the same id.
    public func addCharges(_ more: [SimulatedStripeCharge]) {
        let ids = Set(more.map(\.id))
        charges = charges.filter { !ids.contains($0.id) } + more
    }

    public func setPeriodLayout(_ layout: StripePeriodLayout) { self.layout = layout }

    /// Queues `fault` for requests about `key` (a customer id for lists, a subscription id for retrievals,
    /// `StripeSimulator.eventsKey` for `GET /v1/events`, an invoice id for `GET /v1/invoice_payments`, a payment
    /// intent id for `GET /v1/charges?payment_intent=`, a charge id for `GET /v1/charges/{id}`,
    /// `StripeSimulator.refundsKey(charge:)` for `GET /v1/refunds?charge=`) for the next `times` requests (nil: forever); queued faults apply in order.
    public func setFault(_ fault: StripeFault, for key: String, times: Int? = nil) {
        faults[key, default: []].append((fault, times))
    }

    public func clearFaults() { faults = [:] }

    /// From now on the key is a restricted key without these read permissions: a request needing one answers 403 with
    /// Stripe's `permission` message (`permissionDenied`); empty: every read allowed again.
    public func restrictKey(denying permissions: Set<StripeReadPermission>) { deniedReads = permissions }

    /// Every request answers `status` (e.g. 503, Stripe's `api_error`) from now on; nil: up again.
    public func setDown(status: Int?) { downStatus = status }

    // MARK: - Observation

    public func requestCount() -> Int { requests }
    public func rateLimitedCount() -> Int { rateLimitedAnswers }
    /// Every request so far (the latest 512), oldest first.
    public func recordedRequests() -> [StripeRecordedRequest] { recorded }

    // MARK: - Serving

    /// The fault key of `GET /v1/events`.
    public static let eventsKey = "events"

    /// The fault key of `GET /v1/invoices`.
    public static let invoicesKey = "invoices"

    /// The fault key of `GET /v1/refunds?charge=…`.
    public static func refundsKey(charge: String) -> String { "refunds/\(charge)" }

    public func handle(_ request: SimulatorRequest) async -> SimulatorResponse? {
        let segments = request.pathSegments
        let isEvents = segments == ["v1", "events"]
        let isPayments = segments == ["v1", "invoice_payments"]
        let isCharges = (segments.count == 2 || segments.count == 3) && segments[0] == "v1" && segments[1] == "charges"
        let isRefunds = segments == ["v1", "refunds"]
        let isInvoices = segments == ["v1", "invoices"]
        let isItems = segments == ["v1", "subscription_items"]
        let isCheckout = segments.count >= 3 && segments[0] == "v1" && segments[1] == "checkout" && segments[2] == "sessions"
        guard
            isEvents || isPayments || isCharges || isRefunds || isItems || isCheckout || isInvoices
                || (segments.count >= 2 && segments.count <= 3 && segments[0] == "v1" && segments[1] == "subscriptions")
        else { return nil }
        requests += 1
        recorded.append(
            StripeRecordedRequest(path: request.path, query: request.query, headers: request.headers, queryValues: request.queryValues))
        if recorded.count > 512 { recorded.removeFirst(recorded.count - 512) }
        if let downStatus { return error(downStatus, type: "api_error", code: nil, "Scripted outage") }
        guard request.method == "GET" else { return error(405, type: "invalid_request_error", code: nil, "Method not allowed") }
        guard request.headers["authorization"] == "Bearer \(apiKey)" else {
            return error(401, type: "invalid_request_error", code: nil, "Invalid API Key provided: sk_test_****")
        }
        if let apiVersion, request.headers["stripe-version"] != apiVersion {
            return error(400, type: "invalid_request_error", code: "invalid_request", "Stripe-Version \(apiVersion) expected")
        }
        if let needed = StripeReadPermission.needed(by: segments), deniedReads.contains(needed) { return permissionDenied(needed) }
        if isEvents { return serve(key: Self.eventsKey) { listEvents(request.query) } }
        if isInvoices { return serve(key: Self.invoicesKey) { listInvoices(request.query) } }
        if isCheckout { return handleCheckout(request) }
        if isItems {
            guard let subscription = request.query["subscription"] else {
                return error(
                    400, type: "invalid_request_error", code: "parameter_missing", "subscription is required here", param: "subscription")
            }
            return serve(key: Self.itemsKey(subscription: subscription)) { listItems(subscription, request.query) }
        }
        // The customer expansion is read apart from the others (Stripe takes several `expand[]`).
        let expansions = request.queryValues["expand[]"] ?? []
        let expandCustomer =
            !ignoresCustomerExpansion && (expansions.contains("data.customer") || expansions.contains("customer"))
        let expand = expansions.last { $0 != "data.customer" && $0 != "customer" }
        if isPayments {
            guard let invoice = request.query["invoice"] else {
                return error(400, type: "invalid_request_error", code: "parameter_missing", "invoice is required here", param: "invoice")
            }
            return serve(key: invoice) { listPayments(invoice, request.query) }
        }
        if isRefunds {
            guard let charge = request.query["charge"] else { return listEveryRefund(request.query) }
            return serve(key: Self.refundsKey(charge: charge)) { listRefunds(charge, request.query) }
        }
        if isCharges {
            if segments.count == 3 {
                let id = segments[2]
                return serve(key: id) { retrieveCharge(id, withRefunds: expand == "refunds") }
            }
            guard let intent = request.query["payment_intent"] else { return listEveryCharge(request.query) }
            return serve(key: intent) { listCharges(intent, request.query, withRefunds: expand == "data.refunds") }
        }
        if segments.count == 3 {
            let id = segments[2]
            return serve(key: id) { retrieve(id, expand: expand, expandCustomer: expandCustomer) }
        }
        guard let customer = request.query["customer"] else {
            return serve(key: Self.inventoryKey) { listAll(request.query, expandCustomer: expandCustomer) }
        }
        let limit = Int(request.query["limit"] ?? "10") ?? 0
        guard (1...100).contains(limit) else {
            return error(400, type: "invalid_request_error", code: "parameter_invalid_integer", "Invalid limit")
        }
        let statusFilter = request.query["status"]
        let after = request.query["starting_after"]
        return serve(key: customer) {
            list(customer, limit: limit, status: statusFilter, after: after, expand: expand, expandCustomer: expandCustomer)
        }
    }

    func serve(key: String, _ normal: () -> SimulatorResponse) -> SimulatorResponse {
        switch takeFault(for: key) {
        case .status(let status)?:
            let type = status >= 500 ? "api_error" : "invalid_request_error"
            return error(status, type: type, code: nil, "Simulated failure (HTTP \(status))")
        case .rateLimited?:
            rateLimitedAnswers += 1
            var response = error(
                429, type: "invalid_request_error", code: "rate_limit",
                "Request rate limit exceeded. Learn more about rate limits here https://stripe.com/docs/rate-limits.")
            response.headers["stripe-rate-limited-reason"] = "endpoint-rate"
            return response
        case .malformedBody?:
            return .json(200, Data(#"{"object": "list", "data": [{"id": "sub_"#.utf8))
        case .raw(let status, let headers, let body)?:
            var response = SimulatorResponse.json(status, body)
            for (name, value) in headers { response.headers[name.lowercased()] = value }
            return response
        case .trickle(let pause)?:
            var response = normal()
            response.trickle = pause
            return response
        case .normal?, nil:
            return normal()
        }
    }

    private func list(
        _ customer: String, limit: Int, status: String?, after: String?, expand: String?, expandCustomer: Bool
    ) -> SimulatorResponse {
        guard let all = customers[customer] else {
            return error(404, type: "invalid_request_error", code: "resource_missing", "No such customer: '\(customer)'", param: "customer")
        }
        let selected: [SimulatedStripeSubscription]
        switch listing(all, status: status, after: after) {
        case .success(let remaining): selected = remaining
        case .failure(let refusal): return refusal.response
        }
        let page = Array(selected.prefix(limit))
        let object: [String: Any] = [
            "object": "list", "url": "/v1/subscriptions", "has_more": selected.count > limit,
            "data": page.map {
                encode($0, expand: expand.flatMap { $0.hasPrefix("data.") ? String($0.dropFirst(5)) : nil }, expandCustomer: expandCustomer)
            },
        ]
        return json(200, object)
    }

    /// `GET /v1/events`: `type` or `types[]`/`types[n]` (at most 20), `created[gt|gte|lt|lte]`, `limit` (1...100),
    /// `starting_after`; newest first.
    private func listEvents(_ query: [String: String]) -> SimulatorResponse {
        let limit = Int(query["limit"] ?? "10") ?? 0
        guard (1...100).contains(limit) else {
            return error(400, type: "invalid_request_error", code: "parameter_invalid_integer", "Invalid limit", param: "limit")
        }
        let types = query.filter { $0.key == "types[]" || ($0.key.hasPrefix("types[") && $0.key.hasSuffix("]")) }.map(\.value)
        guard types.count <= 20 else {
            return error(400, type: "invalid_request_error", code: "parameter_invalid", "types may list at most 20", param: "types")
        }
        if query["type"] != nil && !types.isEmpty {
            return error(400, type: "invalid_request_error", code: "parameter_invalid", "type and types together", param: "types")
        }
        var created: [String: Int64] = [:]
        for name in ["gt", "gte", "lt", "lte"] {
            guard let text = query["created[\(name)]"] else { continue }
            guard let value = Int64(text) else {
                return error(400, type: "invalid_request_error", code: "parameter_invalid_integer", "Invalid created", param: "created")
            }
            created[name] = value
        }
        func inWindow(_ date: Date) -> Bool {
            let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
            return (created["gt"].map { seconds > $0 } ?? true) && (created["gte"].map { seconds >= $0 } ?? true)
                && (created["lt"].map { seconds < $0 } ?? true) && (created["lte"].map { seconds <= $0 } ?? true)
        }
        let wanted = types.isEmpty ? query["type"].map { [$0] } : types
        var selected = events.enumerated()
            .filter { entry in inWindow(entry.element.created) && (wanted.map { Self.matches(entry.element.type, $0) } ?? true) }
            .sorted { $0.element.created != $1.element.created ? $0.element.created > $1.element.created : $0.offset > $1.offset }
            .map(\.element)
        if let after = query["starting_after"] {
            guard let index = selected.firstIndex(where: { $0.id == after }) else {
                return error(
                    404, type: "invalid_request_error", code: "resource_missing", "No such event: '\(after)'", param: "starting_after")
            }
            selected = Array(selected[(index + 1)...])
        }
        let page = Array(selected.prefix(limit))
        return json(
            200,
            [
                "object": "list", "url": "/v1/events", "has_more": selected.count > limit,
                "data": page.map { $0.json(apiVersion: apiVersion) },
            ])
    }

    /// Stripe's type filter: an exact type, or a `*` wildcard (`customer.subscription.*`).
    private static func matches(_ type: String, _ patterns: [String]) -> Bool {
        patterns.contains { pattern in
            pattern.hasSuffix("*") ? type.hasPrefix(String(pattern.dropLast())) : type == pattern
        }
    }

    private func retrieve(_ id: String, expand: String?, expandCustomer: Bool) -> SimulatorResponse {
        for (_, subscriptions) in customers.sorted(by: { $0.key < $1.key }) {
            if let found = subscriptions.first(where: { $0.id == id }) {
                return json(200, encode(found, expand: expand, expandCustomer: expandCustomer))
            }
        }
        return error(404, type: "invalid_request_error", code: "resource_missing", "No such subscription: '\(id)'", param: "id")
    }

    private func customerID(of subscription: SimulatedStripeSubscription) -> String {
        customers.first { $0.value.contains { $0.id == subscription.id } }?.key ?? "cus_unknown"
    }

    /// `expand`: the expansion asked for the subscription (`latest_invoice` or `latest_invoice.payments`);
    /// `expandCustomer`: the customer written as an object with its `metadata`.
    func encode(_ subscription: SimulatedStripeSubscription, expand: String? = nil, expandCustomer: Bool = false) -> [String: Any] {
        func seconds(_ date: Date?) -> Any { date.map { Int64($0.timeIntervalSince1970.rounded(.down)) } ?? NSNull() }
        var object: [String: Any] = [
            "id": subscription.id, "object": "subscription", "customer": customerID(of: subscription),
            "status": subscription.status, "cancel_at_period_end": subscription.cancelAtPeriodEnd,
            "cancel_at": seconds(subscription.cancelAt), "canceled_at": seconds(subscription.canceledAt),
            "ended_at": seconds(subscription.endedAt), "trial_end": seconds(subscription.trialEnd),
            "created": seconds(subscription.created), "start_date": seconds(subscription.created),
            "currency": subscription.items.first?.currency ?? "usd", "collection_method": "charge_automatically",
            "latest_invoice": NSNull(), "metadata": subscription.metadata,
            "pause_collection": NSNull(),
        ]
        if let livemode = subscription.livemode { object["livemode"] = livemode }
        if expandCustomer { object["customer"] = customerObject(customerID(of: subscription), livemode: subscription.livemode) }
        if let invoice = subscription.latestInvoice {
            if invoice.expandable, expand == "latest_invoice" || expand == "latest_invoice.payments" {
                object["latest_invoice"] = StripeWireValues.invoice(
                    invoice, subscriptionID: subscription.id, customerID: customerID(of: subscription),
                    livemode: subscription.livemode ?? true, withPayments: expand == "latest_invoice.payments")
            } else {
                object["latest_invoice"] = invoice.id
            }
        }
        let embedded = embeddedItemLimit.map { Array(subscription.items.prefix(max(1, $0))) } ?? subscription.items
        object["items"] = [
            "object": "list", "data": embedded.map { encodeItem($0, of: subscription) },
            "has_more": embedded.count < subscription.items.count, "total_count": subscription.items.count,
            "url": "/v1/subscription_items?subscription=\(subscription.id)",
        ]
        if layout == .subscription {
            object["current_period_start"] = seconds(subscription.currentPeriodStart)
            object["current_period_end"] = seconds(subscription.currentPeriodEnd)
        }
        return object
    }

    private func takeFault(for key: String) -> StripeFault? {
        guard var queue = faults[key], !queue.isEmpty else { return nil }
        let fault = queue[0].fault
        if let remaining = queue[0].remaining {
            if remaining <= 1 { queue.removeFirst() } else { queue[0].remaining = remaining - 1 }
        }
        faults[key] = queue.isEmpty ? nil : queue
        return fault
    }

    func json(_ status: Int, _ object: [String: Any]) -> SimulatorResponse {
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        var response = SimulatorResponse.json(status, body)
        response.headers["request-id"] = "req_sim\(requests)"
        return response
    }

    func error(_ status: Int, type: String, code: String?, _ message: String, param: String? = nil) -> SimulatorResponse {
        var inner: [String: Any] = ["type": type, "message": message]
        if let code { inner["code"] = code }
        if let param { inner["param"] = param }
        return json(status, ["error": inner])
    }
}
