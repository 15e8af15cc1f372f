import VaultJOSE

/// Who a request acts for: the OIDC issuer, the OEM client (`azp`) and the subject, exactly the
/// identity an accepted token's claims establish.
public typealias SessionIdentity = JWTClaimsRules.Identity
