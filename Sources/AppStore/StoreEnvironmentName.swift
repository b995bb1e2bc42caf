/// Apple's environment names as they appear in signed payloads. In a file of its own (no imports) so the fuzz
/// target (`scripts/fuzz`) can compile the receipt decoder without the verifier's crypto modules.
public enum StoreEnvironmentName: String, Sendable, Hashable {
    case production = "Production"
    case sandbox = "Sandbox"
}
