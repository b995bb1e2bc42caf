import AsyncHTTPClient
import Foundation
import Logging
import RevenueCat
import SourceHTTP
import SubreconJob

extension Commands {
    /// `subrecon doctor`'s RevenueCat lines (docs/CONTRACT.md, "subrecon doctor"): the v1 key judged by its shape (v1
    /// has no read that creates nothing), saying with v1 alone that its questions create customers and that configuring
    /// v2 avoids it; with v2, its key proven by reads that create nothing, within `timeout`.
    static func revenueCatChecks(_ config: SubreconConfiguration, timeout: Duration, logger: Logger) async -> [CredentialCheck] {
        guard let revenueCat = config.revenueCat else { return [] }
        var v1 = revenueCat.credentialCheck
        guard let v2 = revenueCat.v2 else {
            v1.text +=
                "; v1 alone: each question about an id RevenueCat does not know creates a customer there (the free sweep asks "
                + "many); set REVENUECAT_V2_API_KEY and REVENUECAT_PROJECT_ID and the night asks API v2 first, so the free "
                + "sweep creates nothing, and this check proves that key"
            return [v1]
        }
        do {
            let line = try await HTTPClient.withHTTPClient(configuration: httpConfiguration(concurrency: 1)) { http in
                let client = RevenueCatV2Client(httpClient: http, configuration: v2, logger: logger)
                let (check, cutOff) = await LookupDeadline.run(within: timeout) { await client.credentialCheck() }
                guard let check, !cutOff else {
                    let seconds = Double(timeout / .milliseconds(1)) / 1000
                    return CredentialCheck(RevenueCatV2Client.sourceName, .unreachable, "no answer within \(seconds) s (--timeout)")
                }
                return check
            }
            return [v1, line]
        } catch {
            return [v1, CredentialCheck(RevenueCatV2Client.sourceName, .unreachable, "the HTTP client failed: \(type(of: error))")]
        }
    }
}
