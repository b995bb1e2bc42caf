import SourceHTTP
import Stripe
import SubreconCore

extension StripeSource {
    /// Stripe's doctor line: `StripeClient.credentialCheck`, every list the night reads asked once.
    static func credentialChecks(_ stripe: StripeConfiguration, context: SourceContext) async -> [CredentialCheck] {
        let client = StripeClient(
            httpClient: context.httpClient, configuration: stripe, logger: context.logger, observer: context.stats,
            gate: context.gates[.stripe])
        return [await client.credentialCheck()]
    }
}
