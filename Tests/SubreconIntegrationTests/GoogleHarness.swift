import StoreSimulator
import SubreconTestSupport

/// The Google Play simulator around a PostgreSQL `Harness`, for the suites that show what only PostgreSQL can (the
/// job's rules in either backend use `GoogleWorld.with`).
enum GoogleHarness {
    static func with(_ body: (Harness, GooglePlaySimulator) async throws -> Void) async throws {
        let account = try GoogleTestServiceAccount.generate(tokenURI: "{base}/token")
        let google = GooglePlaySimulator(account: account, packageName: GoogleWorld.package)
        try await Harness.with(revenueCat: false, routes: [google], extra: GoogleWorld.environment(account)) { h in
            try await body(h, google)
        }
    }

}
