import Foundation

/// The users RevenueCat has answered for in an earlier run (`revenuecat_known_customers`, CONTRACT "Sources and the
/// decision"): with API v2 configured, such a user needs no v2 question before v1 is asked, since v1 creates no
/// customer for an id RevenueCat already knows. Kept when v1 or v2 answered that the customer exists; never removed
/// (a customer RevenueCat deletes later is answered by v1 as today: CONTRACT says what then happens).
public protocol KnownRevenueCatCustomers: Sendable {
    /// Whether `userID` is one RevenueCat answered for before.
    func isKnownRevenueCatCustomer(_ userID: String) async throws -> Bool
    /// Keeps `userID` as one RevenueCat answered for; idempotent.
    func rememberRevenueCatCustomer(_ userID: String) async throws
}
