import Foundation
import RevenueCat
import SourceHTTP
import SubreconJob

extension SubreconConfiguration {
    /// `REVENUECAT_V2_API_KEY` (or `_FILE`) and `REVENUECAT_PROJECT_ID` (CONTRACT "Environment"): optional and together,
    /// and only beside `REVENUECAT_API_KEY` (API v2 does not carry what the decision reads from v1). One without the
    /// other, or both without the v1 key: 78 naming the variables. The key is read even when unset, so
    /// `subrecon secret-names` lists it.
    static func revenueCatV2(
        _ env: ProcessEnvironment, v1Key: String?, baseURL: String, policy: SourceRequestPolicy
    ) throws(ConfigError) -> RevenueCatV2Configuration? {
        let key = try env.secret("REVENUECAT_V2_API_KEY")
        let project = env.string("REVENUECAT_PROJECT_ID")
        switch (key, project) {
        case (nil, nil):
            return nil
        case (.some, nil):
            throw ConfigError(
                "REVENUECAT_V2_API_KEY, REVENUECAT_PROJECT_ID",
                "must be set together: REVENUECAT_V2_API_KEY is set, REVENUECAT_PROJECT_ID is not")
        case (nil, .some):
            throw ConfigError(
                "REVENUECAT_V2_API_KEY, REVENUECAT_PROJECT_ID",
                "must be set together: REVENUECAT_PROJECT_ID is set, REVENUECAT_V2_API_KEY is not")
        case (.some(let key), .some(let project)):
            guard v1Key != nil else {
                throw ConfigError(
                    "REVENUECAT_API_KEY",
                    "is not set, but REVENUECAT_V2_API_KEY is: API v2 serves beside the v1 key, which the decision reads; "
                        + "set REVENUECAT_API_KEY too")
            }
            return RevenueCatV2Configuration(
                baseURL: baseURL, apiKey: key, projectID: project,
                requestPolicy: policy.limitingBodies(to: RevenueCatV2Configuration.defaultMaxBodyBytes))
        }
    }
}
