/// What one source's harmless authenticated read proved about its credentials (`subrecon doctor`, docs/CONTRACT.md
/// "subrecon doctor"): the key and the permissions the night needs hold, or what to fix, or that the source gave no
/// answer saying anything about the key. `text` is operator text and never holds a secret: a source's own error text
/// is never quoted whole (Stripe's repeats part of the key), only the codes and permission names read from it.
public struct CredentialCheck: Sendable, Hashable, CustomStringConvertible {
    public enum Outcome: Sendable, Hashable {
        /// The source answered as only a working key with the night's permissions can (✓).
        case holds
        /// The key, a permission or a setting is wrong, or the answer proves nothing about the key (✗, exit 78).
        case misconfigured
        /// No answer about the key: DNS, connect, timeout, 5xx, rate limited past its budget (✗, exit 69).
        case unreachable
        /// Nothing could be asked without changing something at the source; `text` says what and why (–).
        case notChecked
    }

    /// What the line is about: the source's name (`app_store`, `stripe`, …), or a part of it.
    public var subject: String
    public var outcome: Outcome
    public var text: String

    public init(_ subject: String, _ outcome: Outcome, _ text: String) {
        self.subject = subject
        self.outcome = outcome
        self.text = text
    }

    public var description: String { "\(subject): \(text)" }

    /// The check of a read that ended without an answer to judge (`failure` from `SourceTransport`; `asking` names
    /// the read): unreachable when nothing answered (network, timeouts, 5xx, 429 past its budget, the deadline), a
    /// configuration problem when the request could not be built (a key that cannot sign) or the answer was not one
    /// a read of this kind gives.
    public static func failed(_ subject: String, asking what: String, _ failure: SourceRequestFailure) -> CredentialCheck {
        switch failure {
        case .exhausted, .rateLimitWaitTooLong, .rateLimitBudgetSpent, .beyondDeadline, .sourceDown, .cancelled, .notPermitted:
            return CredentialCheck(subject, .unreachable, "\(what): no answer about the key: \(failure.description)")
        case .requestNotBuilt:
            return CredentialCheck(subject, .misconfigured, "\(what): the request could not be built (the key cannot sign it)")
        case .rejected, .bodyTooLarge:
            return CredentialCheck(subject, .misconfigured, "\(what): \(failure.description): not an answer that proves the key")
        }
    }

    /// Text read from a source's answer made safe for a line: at most `limit` characters of letters, digits, `_`, `-`
    /// and `.`; nil when nothing is left (then the caller says the answer named nothing, never a guess).
    public static func token(_ text: String?, limit: Int = 60) -> String? {
        guard let text else { return nil }
        let kept = text.unicodeScalars.prefix(limit).filter {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "_-.".unicodeScalars.contains($0)
        }
        return kept.isEmpty || kept.count != min(text.unicodeScalars.count, limit) ? nil : String(String.UnicodeScalarView(kept))
    }
}
