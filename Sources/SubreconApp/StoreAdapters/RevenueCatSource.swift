import Foundation
import Logging
import RevenueCat
import SubreconCore
import SubreconPorts

/// Where the run keeps the users RevenueCat answered for (CONTRACT "Sources and the decision"): read always, written
/// only by a run that writes (a dry run writes nothing).
public struct RevenueCatMemory: Sendable {
    public var customers: any KnownRevenueCatCustomers
    public var writes: Bool

    public init(_ customers: any KnownRevenueCatCustomers, writes: Bool) {
        self.customers = customers
        self.writes = writes
    }
}

/// RevenueCat's answer about one user (CONTRACT "Sources and the decision"). With v1 alone: v1's
/// `GET /v1/subscribers/{id}`, which creates a customer RevenueCat does not know. With v2 beside it: a user RevenueCat
/// has not answered for in an earlier run is first asked v2's get-customer, which creates nothing; its 404
/// `resource_missing` is the complete answer "RevenueCat knows no purchase of this user" (the facts of a v1 subscriber
/// with no purchases) and v1 is not asked; only its 200 leads to v1; any other v2 answer is the user's `fetch_error`.
public struct RevenueCatSource: Sendable {
    public let v1: RevenueCatClient
    public let v2: RevenueCatV2Client?
    public let memory: RevenueCatMemory?
    let logger: Logger

    public init(v1: RevenueCatClient, v2: RevenueCatV2Client?, memory: RevenueCatMemory?, logger: Logger) {
        self.v1 = v1
        self.v2 = v2
        self.memory = memory
        self.logger = logger
    }

    /// What RevenueCat says about `userID`; never throws (a failure is `SourceFacts.failed`).
    public func facts(for userID: String) async -> SourceFacts {
        let known = await isKnown(userID)
        if let v2, !known {
            do {
                if try await v2.existence(of: userID) == .missing {
                    return SourceFacts(revenueCatKnowsSubscriber: false, revenueCatPurchases: [])
                }
            } catch {
                logger.debug(
                    "revenuecat v2 lookup failed", metadata: ["user.id": "\(userID)", "error.message": "\(error.description)"])
                return .failed(SourceError(origin: .revenueCat, kind: .fetch, message: "RevenueCat API v2: \(error.description)"))
            }
        }
        let facts = await v1.facts(for: userID)
        // v1 answered (200 or 201): the customer exists at RevenueCat from now on, and asking v1 again creates nothing.
        if facts.errors.isEmpty && !known { await remember(userID) }
        return facts
    }

    private func isKnown(_ userID: String) async -> Bool {
        guard let memory, v2 != nil else { return false }
        do {
            return try await memory.customers.isKnownRevenueCatCustomer(userID)
        } catch {
            // Not knowing costs one v2 question, never a customer.
            logger.debug("revenuecat known-customer read failed", metadata: ["user.id": "\(userID)"])
            return false
        }
    }

    private func remember(_ userID: String) async {
        guard let memory, memory.writes, v2 != nil else { return }
        do {
            try await memory.customers.rememberRevenueCatCustomer(userID)
        } catch {
            logger.debug("revenuecat known-customer write failed", metadata: ["user.id": "\(userID)"])
        }
    }
}

extension RevenueCatSource {
    /// The summary's line for RevenueCat: how it is asked, and, with v1 alone, that each question about an id
    /// RevenueCat does not know creates a customer there (CONTRACT "Sources and the decision").
    static func note(_ configuration: RevenueCatConfiguration) -> String {
        guard let v2 = configuration.v2 else {
            return "v1 REST at \(configuration.baseURL); v1 alone: each question about an id RevenueCat does not know creates "
                + "a customer there (set REVENUECAT_V2_API_KEY and REVENUECAT_PROJECT_ID to avoid it)"
        }
        return "v1 REST at \(configuration.baseURL), API v2 first for users it may not know (project \(v2.projectID)): "
            + "no customer created"
    }
}
