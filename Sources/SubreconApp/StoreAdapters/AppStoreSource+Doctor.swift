import AppStore
import SourceHTTP
import SubreconCore

extension AppStoreSource {
    /// The App Store's doctor lines: `AppStoreClient.credentialCheck` for the App Store Server API; the legacy
    /// `verifyReceipt` bridge is not asked (Apple judges `APPLE_SHARED_SECRET` only together with a real receipt, which
    /// doctor does not have), which its line says.
    static func credentialChecks(_ configuration: AppleConfiguration, context: SourceContext) async -> [CredentialCheck] {
        var checks: [CredentialCheck] = []
        if let apple = configuration.appStore {
            do {
                let client = try AppStoreClient(
                    configuration: apple, httpClient: context.httpClient, logger: context.logger, observer: context.stats,
                    gate: context.gates[.appStore])
                checks.append(await client.credentialCheck())
            } catch {
                checks.append(
                    CredentialCheck(origin.rawValue, .misconfigured, "APP_STORE_PRIVATE_KEY cannot sign App Store requests: \(error)"))
            }
        }
        if configuration.receipts != nil {
            checks.append(
                CredentialCheck(
                    origin.rawValue + " receipts", .notChecked,
                    "APPLE_SHARED_SECRET is not sent: Apple's verifyReceipt judges it only with a real receipt, which doctor "
                        + "does not have; the night's first receipt lookup proves it"))
        }
        return checks
    }
}
