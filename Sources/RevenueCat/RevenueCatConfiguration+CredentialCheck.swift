import Foundation
import SourceHTTP

extension RevenueCatConfiguration {
    /// The prefixes of RevenueCat's public SDK keys (one per app: App Store, Google Play, Amazon, Stripe, Web Billing,
    /// Test Store), with what each names. They configure the SDK in an app; they are not secret keys.
    public static let publicKeyPrefixes: [(prefix: String, names: String)] = [
        ("appl_", "an App Store app"), ("goog_", "a Google Play app"), ("amzn_", "an Amazon app"), ("strp_", "a Stripe app"),
        ("rcb_", "a Web Billing app"), ("test_", "a Test Store app"),
    ]

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
        if let known = Self.publicKeyPrefixes.first(where: { key.hasPrefix($0.prefix) }) {
            return CredentialCheck(
                RevenueCatClient.sourceName, .misconfigured,
                "REVENUECAT_API_KEY is a public SDK key of \(known.names) (\(known.prefix)…), not a secret key" + fix)
        }
        if key.hasPrefix("atk_") {
            return CredentialCheck(
                RevenueCatClient.sourceName, .misconfigured,
                "REVENUECAT_API_KEY is an OAuth access token (atk_…), which only the v2 API takes; the night reads v1" + fix)
        }
        return CredentialCheck(
            RevenueCatClient.sourceName, .misconfigured, "REVENUECAT_API_KEY does not have the shape of RevenueCat's secret keys (sk_…)" + fix)
    }
}
