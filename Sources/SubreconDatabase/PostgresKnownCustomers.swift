import Foundation
import PostgresNIO
import SubreconPorts

extension PostgresKnownCustomers {
    /// Whether `userID` is in `revenuecat_known_customers` (its primary key).
    public func isKnownRevenueCatCustomer(_ userID: String) async throws -> Bool {
        try await run("read whether RevenueCat knows a user") {
            let rows = try await session.query(
                "select 1 from revenuecat_known_customers where user_id = \(userID)", logger: logger)
            for try await _ in rows.decode(Int.self) { return true }
            return false
        }
    }

    /// Keeps `userID` in `revenuecat_known_customers`; a user kept already changes nothing.
    public func rememberRevenueCatCustomer(_ userID: String) async throws {
        try await run("remember that RevenueCat knows a user") {
            try await session.query(
                "insert into revenuecat_known_customers (user_id) values (\(userID)) on conflict (user_id) do nothing", logger: logger)
        }
    }
}
