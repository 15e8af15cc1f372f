import WalletVault

extension VaultSyncEngine {
    /// Approves `newDevice`'s pairing request here and returns the confirmation code the user would type on it.
    public func approveAndGetCode(_ newDevice: VaultSyncEngine) async throws -> String {
        let request = try await newDevice.pairingRequest()
        _ = try await approve(request)
        return try await confirmationCode(for: request)
    }

    /// The whole pairing as an app runs it: request, approval here, the confirmation code typed on `newDevice`.
    public func pairAndConfirm(_ newDevice: VaultSyncEngine) async throws -> SyncReport {
        try await newDevice.confirmPairing(code: try await approveAndGetCode(newDevice))
    }
}
