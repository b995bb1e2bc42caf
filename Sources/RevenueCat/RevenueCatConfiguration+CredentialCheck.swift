import Foundation
import SourceHTTP

extension RevenueCatConfiguration {
    /// The prefixes of RevenueCat's public SDK keys, one per app of a project (App Store, Play Store, Amazon, web
    /// payments, Web Billing, Test Store). They configure the SDK in an app; they are not secret keys.
    public static let publicKeyPrefixes = ["appl_", "goog_", "amzn_", "strp_", "rcb_", "test_"]

    /// `subrecon doctor`'s check of RevenueCat (docs/CONTRACT.md, "subrecon doctor"), made without a request: RevenueCat's
    /// v1 API has no read that leaves nothing behind (`GET /v1/subscribers/{id}` creates the customer it is asked about,
    /// `GET /v1/subscribers/{id}/offerings` may enrol it in an experiment), so only the key's shape is judged. A secret
    /// key starts with `sk_`; a public SDK key, an OAuth token (`atk_`, v2 only) or any other text is refused naming
    /// which. The line says the key was not sent. Never shows the key beyond its prefix.
    public var credentialCheck: CredentialCheck {
        let notAsked =
            "not sent: RevenueCat's v1 API has no read that creates nothing (GET /v1/subscribers creates the customer it is "
            + "asked about); the night's first lookup proves the key"
        let key = apiKey.trimmingCharacters(in: .whitespaces)
        if key.hasPrefix("sk_") && key.count > 3 {
            return CredentialCheck(
                RevenueCatClient.sourceName, .holds, "REVENUECAT_API_KEY has a secret key's shape (sk_…); \(notAsked)")
        }
        let fix = "; use a secret API key (sk_…): Project settings → API keys → + New (\(notAsked))"
        if let prefix = Self.publicKeyPrefixes.first(where: { key.hasPrefix($0) }) {
            return CredentialCheck(
                RevenueCatClient.sourceName, .misconfigured,
                "REVENUECAT_API_KEY is a public SDK key (\(prefix)…), which configures the SDK in one of the project's apps, "
                    + "not a secret key" + fix)
        }
        if key.hasPrefix("atk_") {
            return CredentialCheck(
                RevenueCatClient.sourceName, .misconfigured,
                "REVENUECAT_API_KEY is an OAuth access token (atk_…), which only the v2 API takes; the night reads v1" + fix)
        }
        return CredentialCheck(
            RevenueCatClient.sourceName, .misconfigured,
            "REVENUECAT_API_KEY does not have the shape of RevenueCat's secret keys (sk_…)" + fix)
    }
}
