import Foundation

/// RevenueCat API v2 as the simulator answers it (`RevenueCatSimulator.setV2`).
public struct RevenueCatV2SimulatorSettings: Sendable {
    /// The v2 secret key requests must carry (`Authorization: Bearer <key>`; a v1 key is refused, 401).
    public var apiKey: String
    /// The key's project; another project id is answered 404 `resource_missing` naming the project.
    public var projectID: String
    /// The key's permissions; without `customer_information:customers:read` every read is 403 `authorization_error`.
    public var permissions: Set<String>
    /// Faults per customer id, applied in order to v2 requests for that id.
    var faults: [String: [RevenueCatFault]] = [:]
    /// The rate-limit headers success answers carry, as sent (nil: a header left out); by default the requests so far
    /// (modulo 480) of a limit of 480 a minute.
    var rateLimitHeaders: (usage: String?, limit: String?)?

    public static let customersRead = "customer_information:customers:read"
}

/// RevenueCat's v2 reads on loopback, over the same customers as v1 (`subscribers`): get-customer
/// (`GET /v2/projects/{project_id}/customers/{customer_id}`: 200 for a customer v1 knows, 404 `resource_missing` for
/// any other id, never creating one) and list-customers (`GET /v2/projects/{project_id}/customers?limit=N`, a list
/// whose `next_page` is null on the last page). Errors are v2's object `{object, type, message, retryable, doc_url}`,
/// with `backoff_ms` on a 429. Success answers carry `RevenueCat-Rate-Limit-Current-Usage`/`-Limit`.
extension RevenueCatSimulator {
    /// Serves API v2 with this key and project (and permissions); until called, `/v2/…` is not answered.
    public func setV2(apiKey: String, projectID: String, permissions: Set<String> = [RevenueCatV2SimulatorSettings.customersRead]) {
        v2 = RevenueCatV2SimulatorSettings(apiKey: apiKey, projectID: projectID, permissions: permissions)
    }

    /// The `RevenueCat-Rate-Limit-Current-Usage` and `-Current-Limit` every later success answer carries, as sent
    /// (nil: the header is left out).
    public func setV2RateLimitHeaders(usage: String?, limit: String?) {
        v2?.rateLimitHeaders = (usage, limit)
    }

    /// Queues `fault` for the next v2 request about `customerID` (`.status`, `.rateLimited`, `.malformedJSON`, `.raw`,
    /// `.delay` are answered in v2's shapes).
    public func setV2Fault(_ fault: RevenueCatFault, for customerID: String) {
        v2?.faults[customerID, default: []].append(fault)
    }

    func handleV2(_ request: SimulatorRequest) async -> SimulatorResponse? {
        guard let settings = v2 else { return nil }
        let segments = request.pathSegments
        guard segments.count >= 4, segments[1] == "projects", segments[3] == "customers" else { return nil }
        counters.v2Requests += 1
        guard request.method == "GET" else { return v2Error(405, "invalid_request", "Method not allowed") }
        guard request.headers["authorization"] == "Bearer \(settings.apiKey)" else {
            return v2Error(401, "authentication_error", "Invalid API key.")
        }
        guard segments[2] == settings.projectID else {
            return v2Error(404, "resource_missing", "Project not found.")
        }
        guard settings.permissions.contains(RevenueCatV2SimulatorSettings.customersRead) else {
            return v2Error(
                403, "authorization_error",
                "The API key does not have the required permission: \(RevenueCatV2SimulatorSettings.customersRead)")
        }
        switch segments.count {
        case 4: return v2List(project: settings.projectID, limit: Int(request.query["limit"] ?? "") ?? 20)
        case 5: return await v2Customer(segments[4], project: settings.projectID)
        default: return v2Error(404, "resource_missing", "Resource not found.")
        }
    }

    private func v2Customer(_ id: String, project: String) async -> SimulatorResponse {
        if let fault = v2?.faults[id]?.first {
            v2?.faults[id]?.removeFirst()
            if let answer = await v2Fault(fault) { return answer }
        }
        guard let subscriber = subscribers[id] else {
            return v2Error(404, "resource_missing", "Customer not found.")
        }
        return v2Success(Self.v2CustomerObject(id: id, project: project, firstSeen: subscriber.firstSeen ?? Date(timeIntervalSince1970: 0)))
    }

    private func v2Fault(_ fault: RevenueCatFault) async -> SimulatorResponse? {
        switch fault {
        case .status(let status):
            let type = status >= 500 ? "server_error" : status == 403 ? "authorization_error" : "invalid_request"
            return v2Error(status, type, "Simulated failure (HTTP \(status))")
        case .rateLimited(let backoffMS, let retryAfter):
            counters.rateLimitedAnswers += 1
            var response = v2Error(429, "rate_limit_error", "Rate limit exceeded", backoffMS: backoffMS)
            if let retryAfter { response.headers["retry-after"] = retryAfter }
            return response
        case .malformedJSON:
            return .json(200, Data(#"{"object": "customer", "id": [tru"#.utf8))
        case .raw(let status, let headers, let body):
            var response = SimulatorResponse.json(status, body)
            for (name, value) in headers { response.headers[name.lowercased()] = value }
            return response
        case .delay(let extra):
            try? await Task.sleep(for: extra)
            return nil
        case .trickle:
            return nil
        }
    }

    private func v2List(project: String, limit: Int) -> SimulatorResponse {
        let ids = subscribers.keys.sorted()
        let page = ids.prefix(max(1, min(limit, 1000)))
        let items = page.map { id in
            Self.v2CustomerObject(id: id, project: project, firstSeen: subscribers[id]?.firstSeen ?? Date(timeIntervalSince1970: 0))
        }
        let url = "/v2/projects/\(project)/customers"
        let next: Any =
            page.count < ids.count
            ? url + "?starting_after=" + (page.last?.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") + "&limit=\(limit)"
            : NSNull()
        return v2Success(["object": "list", "items": items, "next_page": next, "url": url])
    }

    static func v2CustomerObject(id: String, project: String, firstSeen: Date) -> [String: Any] {
        let encoded = id.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? id
        return [
            "object": "customer", "id": id, "project_id": project, "first_seen_at": Int64(firstSeen.timeIntervalSince1970 * 1000),
            "last_seen_at": NSNull(), "last_seen_app_version": NSNull(), "last_seen_country": NSNull(),
            "last_seen_platform": NSNull(), "last_seen_platform_version": NSNull(), "experiment": NSNull(),
            "active_entitlements": [
                "object": "list", "items": [] as [Any], "next_page": NSNull(),
                "url": "/v2/projects/\(project)/customers/\(encoded)/active_entitlements",
            ] as [String: Any],
        ]
    }

    private func v2Success(_ object: [String: Any]) -> SimulatorResponse {
        var response = SimulatorResponse.json(200, (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
        if let (usage, limit) = v2?.rateLimitHeaders {
            response.headers["revenuecat-rate-limit-current-usage"] = usage
            response.headers["revenuecat-rate-limit-current-limit"] = limit
        } else {
            response.headers["revenuecat-rate-limit-current-usage"] = String(counters.v2Requests % 480)
            response.headers["revenuecat-rate-limit-current-limit"] = "480"
        }
        return response
    }

    func v2Error(_ status: Int, _ type: String, _ message: String, backoffMS: Int? = nil) -> SimulatorResponse {
        var object: [String: Any] = [
            "object": "error", "type": type, "message": message, "retryable": status == 429 || status >= 500,
            "doc_url": "https://errors.rev.cat/\(type.replacingOccurrences(of: "_", with: "-"))",
        ]
        if let backoffMS { object["backoff_ms"] = backoffMS }
        return .json(status, (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }
}
