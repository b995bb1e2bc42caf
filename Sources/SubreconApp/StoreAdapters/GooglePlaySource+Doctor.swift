import GooglePlay
import SourceHTTP
import SubreconCore

extension GooglePlaySource {
    /// Google Play's doctor line: `GooglePlayClient.credentialCheck`, an access token and one voided purchases read.
    static func credentialChecks(_ google: GooglePlayConfiguration, context: SourceContext) async -> [CredentialCheck] {
        do {
            let client = try GooglePlayClient(
                configuration: google, httpClient: context.httpClient, logger: context.logger, observer: context.stats,
                gate: context.gates[.googlePlay])
            return [await client.credentialCheck()]
        } catch {
            return [CredentialCheck(origin.rawValue, .misconfigured, "GOOGLE_PLAY_SERVICE_ACCOUNT cannot be used: \(error)")]
        }
    }
}
