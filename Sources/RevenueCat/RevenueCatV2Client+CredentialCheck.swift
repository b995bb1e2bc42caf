import Foundation
import SourceHTTP

extension RevenueCatV2Client {
    /// The id `doctor` asks get-customer about: no app user has it, so the answer is 404 and nothing is created.
    public static let probeCustomerID = "subrecon-doctor-probe-customer-that-does-not-exist"

    /// `subrecon doctor`'s proof of the v2 key (docs/CONTRACT.md, "subrecon doctor"), with two reads that create nothing:
    /// `GET /v2/projects/{project_id}/customers?limit=1`, then get-customer of `probeCustomerID`, which must answer 404
    /// `resource_missing`. 401 names the key variable; 403 names the permission the night needs (or a key of another
    /// project); a 404 of the list names the project id. Never shows the key.
    public func credentialCheck() async -> CredentialCheck {
        let project = CredentialCheck.token(configuration.projectID) ?? "as set"
        do {
            _ = try await listCustomers(limit: 1)
        } catch {
            return Self.refusal(error, asking: "GET /v2/projects/{REVENUECAT_PROJECT_ID}/customers?limit=1", project: project)
        }
        do {
            let answer = try await existence(of: Self.probeCustomerID)
            let said = answer == .missing ? "answered 404 resource_missing" : "answered 200"
            return CredentialCheck(
                Self.sourceName, .holds,
                "REVENUECAT_V2_API_KEY reads the customers of project \(project) (a list, and a get-customer of an id no user has "
                    + "\(said)); nothing was created: with v2 no night creates a RevenueCat customer")
        } catch {
            return Self.refusal(error, asking: "GET /v2/projects/{REVENUECAT_PROJECT_ID}/customers/{id}", project: project)
        }
    }

    /// The line for a read that did not answer as a working key's does.
    static func refusal(_ error: RevenueCatError, asking what: String, project: String) -> CredentialCheck {
        switch error {
        case .http(401, let code, _, _):
            return CredentialCheck(
                sourceName, .misconfigured,
                "REVENUECAT_V2_API_KEY is not a key RevenueCat takes (\(what): HTTP 401\(typeText(code))): create a v2 secret key "
                    + "in Project settings → API keys, with \(RevenueCatV2Configuration.customersReadPermission)")
        case .http(403, let code, _, _):
            return CredentialCheck(
                sourceName, .misconfigured,
                "REVENUECAT_V2_API_KEY may not read customers (\(what): HTTP 403\(typeText(code))): give it the permission "
                    + "\(RevenueCatV2Configuration.customersReadPermission), or it is a key of another project than "
                    + "REVENUECAT_PROJECT_ID (\(project))")
        case .http(404, let code, _, _):
            return CredentialCheck(
                sourceName, .misconfigured,
                "REVENUECAT_PROJECT_ID (\(project)) names no project this key reads (\(what): HTTP 404\(typeText(code))): "
                    + "copy the id from the project's settings in RevenueCat")
        case .http, .malformedJSON, .bodyTooLarge, .invalidURL:
            return CredentialCheck(sourceName, .misconfigured, "\(what): \(error.description): not an answer that proves the key")
        case .rateLimited, .rateLimitWaitTooLong, .timedOut, .network, .givenUp, .cancelled:
            return CredentialCheck(sourceName, .unreachable, "\(what): no answer about the key: \(error.description)")
        }
    }

    private static func typeText(_ code: String?) -> String {
        CredentialCheck.token(code).map { " \($0)" } ?? ""
    }
}
