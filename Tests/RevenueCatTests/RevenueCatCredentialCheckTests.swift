import RevenueCat
import SourceHTTP
import Testing

/// `subrecon doctor`'s RevenueCat line (docs/CONTRACT.md, "subrecon doctor"): judged from the key's shape, never by a
/// request (v1's only reads create the customer they are asked about).
@Suite("The RevenueCat doctor check")
struct RevenueCatCredentialCheckTests {
    static func check(_ key: String) -> CredentialCheck { RevenueCatConfiguration(apiKey: key).credentialCheck }

    @Test("a secret key's shape holds, and the line says the key was not sent and why")
    func secretKey() {
        let key = "sk_AbCdEfGhIjKlMnOpQrStUvWxYz012345"
        let check = Self.check(key)
        #expect(check.outcome == .holds)
        #expect(check.subject == "revenuecat")
        #expect(check.text.contains("has a secret key's shape (sk_…); not sent:"))
        #expect(check.text.contains("GET /v1/subscribers creates the customer"))
        #expect(!check.text.contains(String(key.dropFirst(3))))
    }

    @Test("each public SDK key is refused naming its prefix, and never shown")
    func publicKeys() {
        #expect(RevenueCatConfiguration.publicKeyPrefixes == ["appl_", "goog_", "amzn_", "strp_", "rcb_", "test_"])
        for prefix in RevenueCatConfiguration.publicKeyPrefixes {
            let key = prefix + "PublicKeyBody0123456789"
            let check = Self.check(key)
            #expect(check.outcome == .misconfigured, "\(prefix)")
            #expect(check.text.hasPrefix("REVENUECAT_API_KEY is a public SDK key (\(prefix)…), which configures the SDK"))
            #expect(check.text.contains("not a secret key; use a secret API key (sk_…)"))
            #expect(!check.text.contains("PublicKeyBody0123456789"))
        }
    }

    @Test("an OAuth token and a key of no known shape are refused, saying what was seen")
    func otherKeys() {
        #expect(Self.check("atk_TokenBody").outcome == .misconfigured)
        #expect(Self.check("atk_TokenBody").text.contains("an OAuth access token (atk_…)"))
        for key in ["0123456789abcdef0123456789abcdef", "sk_", "SK_UPPER", ""] {
            let check = Self.check(key)
            #expect(check.outcome == .misconfigured, "\(key)")
            #expect(check.text.contains("does not have the shape of RevenueCat's secret keys (sk_…)"), "\(key)")
        }
    }
}
