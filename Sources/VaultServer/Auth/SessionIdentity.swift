/// Who a request acts for: the OIDC issuer, the OEM client and the subject.
public struct SessionIdentity: Sendable, Hashable {
    /// The OIDC issuer that vouched for the user.
    public let issuer: String
    /// The OEM client (`azp`).
    public let authorizedParty: String
    /// The user's subject at that issuer.
    public let subject: String

    /// Creates an identity.
    public init(issuer: String, authorizedParty: String, subject: String) {
        self.issuer = issuer
        self.authorizedParty = authorizedParty
        self.subject = subject
    }
}
