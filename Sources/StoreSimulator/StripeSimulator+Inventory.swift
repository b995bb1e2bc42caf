import Foundation

extension StripeSimulator {
    /// The fault key of `GET /v1/subscriptions` without `customer` (the inventory's list).
    public static let inventoryKey = "inventory"

    /// `GET /v1/subscriptions` across every customer, as Stripe lists it: `status` (one value, or `all`; without it
    /// canceled subscriptions are left out), `limit` (1...100), `starting_after`, and `expand[]=data.customer` (each
    /// customer written as an object with its `metadata`). Subscriptions are listed customer by customer in the
    /// order the customers were given, each customer's in the order given.
    func listAll(_ query: [String: String], expandCustomer: Bool) -> SimulatorResponse {
        let limit = Int(query["limit"] ?? "10") ?? 0
        guard (1...100).contains(limit) else {
            return error(400, type: "invalid_request_error", code: "parameter_invalid_integer", "Invalid limit", param: "limit")
        }
        let status = query["status"]
        if let status, status.contains(",") {
            return error(400, type: "invalid_request_error", code: "parameter_invalid", "Invalid status", param: "status")
        }
        let selected: [SimulatedStripeSubscription]
        switch listing(customerOrder.flatMap { customers[$0] ?? [] }, status: status, after: query["starting_after"]) {
        case .success(let remaining): selected = remaining
        case .failure(let refusal): return refusal.response
        }
        let page = Array(selected.prefix(limit))
        return json(
            200,
            [
                "object": "list", "url": "/v1/subscriptions", "has_more": selected.count > limit,
                "data": page.map { encode($0, expandCustomer: expandCustomer) },
            ])
    }

    /// A 404 answer as an `Error`, so `listing` can return it through a `Result`.
    struct Refusal: Error { let response: SimulatorResponse }

    /// Stripe's `status` filter (its default leaves canceled subscriptions out; `all` lists every one) and
    /// `starting_after` over `all`: what remains to list, or the 404 of a cursor naming no subscription.
    func listing(
        _ all: [SimulatedStripeSubscription], status: String?, after: String?
    ) -> Result<[SimulatedStripeSubscription], Refusal> {
        let selected = all.filter { status == "all" || (status == nil ? $0.status != "canceled" : $0.status == status) }
        guard let after else { return .success(selected) }
        guard let index = selected.firstIndex(where: { $0.id == after }) else {
            return .failure(
                Refusal(
                    response: error(
                        404, type: "invalid_request_error", code: "resource_missing", "No such subscription: '\(after)'",
                        param: "starting_after")))
        }
        return .success(Array(selected[(index + 1)...]))
    }

    /// An expanded customer object.
    func customerObject(_ id: String, livemode: Bool?) -> [String: Any] {
        var object: [String: Any] = [
            "id": id, "object": "customer", "email": NSNull(), "metadata": customerMetadata[id] ?? [String: String](),
            "created": 1_700_000_000,
        ]
        if let livemode { object["livemode"] = livemode }
        return object
    }
}
