import AppStore
import GooglePlay
import Stripe
import SubreconCore
import SubreconPorts
import SubreconTestKit
import Testing

@testable import SubreconApp

/// The stores' configurations as the tests read them (the product reads them only through their adapters).
extension SubreconConfiguration {
    var appStore: AppStoreConfiguration? { (stores[.appStore] as? AppleConfiguration)?.appStore }
    var receipts: ReceiptVerifierConfiguration? { (stores[.appStore] as? AppleConfiguration)?.receipts }
    var googlePlay: GooglePlayConfiguration? { stores[.googlePlay] as? GooglePlayConfiguration }
    var stripe: StripeConfiguration? { stores[.stripe] as? StripeConfiguration }
}

@Suite("The store registry")
struct StoreRegistryTests {
    @Test("the identifier columns the tests below the composition root use are the registry's")
    func columnsMatch() {
        #expect(StoreRegistry.identifierColumns == IdentifierColumn.testColumns)
    }

    @Test("every store declares a valid feed reason, a rate option and an origin of its own")
    func declarations() {
        let origins = StoreRegistry.stores.map { $0.origin }
        #expect(Set(origins).count == origins.count)
        #expect(StoreRegistry.feedReasons.map(\.rawValue) == ["apple_notification", "google_voided", "stripe_event"])
        let allFeeds = StoreRegistry.feedReasons.allSatisfy { $0.isFeed }
        #expect(allFeeds)
        #expect(StoreRegistry.stores.map { $0.rateOption } == ["app-store", "google-play", "stripe"])
    }
}
