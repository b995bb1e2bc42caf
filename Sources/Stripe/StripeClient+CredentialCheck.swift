import AsyncHTTPClient
import Foundation
import NIOHTTP1
import SourceHTTP
import SubreconCore

extension StripeClient {
    /// One list the night reads, as `subrecon doctor` asks it: its name in the line and its path (`limit=1`).
    public struct Probe: Sendable, Hashable {
        public var resource: String
        public var path: String
    }

    /// Every kind of object the night reads (subscriptions and their items, the latest invoice and its payments,
    /// charges and refunds, checkout sessions, events): a restricted key may lack read access to any one of them.
    public static let probes: [Probe] = [
        Probe(resource: "subscriptions", path: "/v1/subscriptions?limit=1&status=all"),
        Probe(resource: "invoices", path: "/v1/invoices?limit=1"),
        Probe(resource: "charges", path: "/v1/charges?limit=1"),
        Probe(resource: "refunds", path: "/v1/refunds?limit=1"),
        Probe(resource: "checkout sessions", path: "/v1/checkout/sessions?limit=1"),
        Probe(resource: "events", path: "/v1/events?limit=1"),
    ]

    /// `subrecon doctor`'s reads of Stripe (docs/CONTRACT.md, "subrecon doctor"): each list of `probes` once, `GET`
    /// with `limit=1`, the key as a bearer and the pinned `Stripe-Version`; nothing is created or changed. 401 is a key
    /// Stripe does not take; 403 a restricted key without read access to that list, named with the permission Stripe's
    /// own message asks for (`'rak_…'`; only that name is read from it: the message repeats part of the key). A
    /// publishable key (`pk_`) is refused before any request.
    public func credentialCheck() async -> CredentialCheck {
        let key = configuration.apiKey
        if key.hasPrefix("pk_") {
            return CredentialCheck(
                Self.sourceName, .misconfigured,
                "STRIPE_API_KEY is a publishable key (pk_…), which reads nothing; use a secret key (sk_…) or a restricted key (rk_…) "
                    + "with read access to \(Self.listed(Self.probes.map(\.resource))) (not asked)")
        }
        var refused: [String] = []
        for probe in Self.probes {
            let what = "GET \(probe.path)"
            switch await transport.send(probeRequest(probe), logger: logger, classify: probeClass) {
            case .failure(let failure):
                return .failed(Self.sourceName, asking: what, failure)
            case .success(let delivery):
                let answer = delivery.value
                if (200..<300).contains(answer.status) { continue }
                if answer.status == 403 {
                    refused.append(
                        probe.resource + (Self.permission(in: answer.body).map { " ('\($0)')" } ?? " (Stripe named no permission)"))
                    continue
                }
                return CredentialCheck(Self.sourceName, .misconfigured, "\(what) answered " + refusal(answer))
            }
        }
        guard refused.isEmpty else {
            return CredentialCheck(
                Self.sourceName, .misconfigured,
                "STRIPE_API_KEY is a restricted key without read access to \(Self.listed(refused)) (HTTP 403): give it Read "
                    + "on each in Dashboard → Developers → API keys")
        }
        let kind = key.hasPrefix("rk_") ? "a restricted key" : "a secret key"
        let mode = key.hasPrefix("sk_test_") || key.hasPrefix("rk_test_") ? " (test mode)" : ""
        return CredentialCheck(
            Self.sourceName, .holds,
            "STRIPE_API_KEY, \(kind)\(mode), reads \(Self.listed(Self.probes.map(\.resource))) (GET …?limit=1 each)")
    }

    /// "a, b and c".
    static func listed(_ items: [String]) -> String {
        items.count < 2 ? items.joined() : items.dropLast().joined(separator: ", ") + " and " + (items.last ?? "")
    }

    private func probeRequest(_ probe: Probe) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: configuration.baseURL + probe.path)
        request.method = .GET
        request.headers.add(name: "Authorization", value: "Bearer \(configuration.apiKey)")
        request.headers.add(name: "Stripe-Version", value: configuration.apiVersion)
        request.headers.add(name: "Accept", value: "application/json")
        return request
    }

    /// 429 waits (Stripe names none: the own backoff) and 5xx are retried; every other answer is judged.
    private func probeClass(_ answer: SourceAnswer) -> AnswerClass<SourceAnswer> {
        switch answer.status {
        case 429:
            let asked = answer.headers.first(name: "retry-after").flatMap { WaitText.number($0) }
            return .rateLimited(asked.map { .seconds($0, cap: configuration.requestPolicy.maxRateLimitWait) } ?? .unspecified)
        case 500...599: return .retry(problem: "HTTP \(answer.status)")
        default: return .success(answer)
        }
    }

    /// What a refusal other than 403 says: 401 the key itself; anything else its status and Stripe's error type and
    /// code (never its message).
    private func refusal(_ answer: SourceAnswer) -> String {
        if answer.status == 401 {
            return "401: Stripe refused STRIPE_API_KEY (not a key of this account, revoked or expired; a live key and a test "
                + "key are different keys)"
        }
        let body = StripeErrorBody.decode(body: answer.body)
        let named = [CredentialCheck.token(body?.type), CredentialCheck.token(body?.code)].compactMap { $0 }
        return "HTTP \(answer.status)" + (named.isEmpty ? " without Stripe's error body" : " (\(named.joined(separator: ", ")))")
            + ": not an answer that proves the key; check STRIPE_API_KEY and STRIPE_BASE_URL"
    }

    /// The permission a 403's message asks for ("Having the 'rak_checkout_session_read' permission would allow this
    /// request to continue."): the first quoted `rak_…` name of letters, digits and `_`; nil when there is none.
    static func permission(in body: Data) -> String? {
        guard let message = StripeErrorBody.decode(body: body)?.message else { return nil }
        for quoted in message.split(separator: "'", omittingEmptySubsequences: false).dropFirst().enumerated()
        where quoted.offset.isMultiple(of: 2) {
            let name = quoted.element
            guard name.hasPrefix("rak_"), name.count <= 80,
                name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" })
            else { continue }
            return String(name)
        }
        return nil
    }
}
