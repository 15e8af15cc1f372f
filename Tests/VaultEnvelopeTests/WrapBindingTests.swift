import Foundation
import Testing
import VaultCrypto
import VaultTestSupport

@testable import VaultEnvelope

/// Issue 26 point 5: every symmetric entry of an anchored blob is bound to its vault and epoch (FORMAT.md §11.9), so
/// a wrap a removed device copied out of an older blob proves nothing about a newer epoch.
@Suite struct WrapBindingTests {
    /// A vault with a device and a recovery code, at epoch 1, and the code's key.
    static func vault() async throws -> (
        sealer: VaultSealer, created: VaultSealer.SealedVault, device: DeviceKEK, recovery: RecoveryCodeKEK
    ) {
        let device = try DeviceKEK.generate()
        let recovery = try RecoveryCodeKEK(code: .generate())
        let sealer = VaultSealer(counterStore: InMemoryCounterStore(), hint: "Laptop", clock: TestSupport.clock())
        let created = try await sealer.create(
            TestSupport.plaintext, vaultID: "v", recipients: [.init(device, label: "Laptop"), .init(recovery, label: "Recovery code")])
        return (sealer, created, device, recovery)
    }

    /// What a removed member and the server can write with what the member kept of `state`: its DEK and entries
    /// unchanged (the recovery code's wrap among them, copied), under a next epoch of a secret of their own.
    static func forgedNextEpoch(of state: VaultState) async throws -> Data {
        let identity = try #require(state.identity)
        let forged = VaultState(
            vaultID: state.vaultID, envelope: state.envelope, entries: state.entries, identity: identity.rotated(), dek: state.dek)
        return try await VaultSealer(counterStore: InMemoryCounterStore(), hint: "Forger", clock: TestSupport.clock())
            .seal(WriterAuthenticationTests.forgedContent, over: forged).blob
    }

    @Test func aRecoveryWrapCopiedIntoANewerEpochIsRefusedAndNothingIsStored() async throws {
        let vault = try await Self.vault()
        let forged = try await Self.forgedNextEpoch(of: vault.created.state)
        // A new phone restoring with the (unchanged) code has nothing pinned: only the binding tells the copy apart.
        let store = InMemoryCounterStore()
        await #expect { try await VaultOpener(counterStore: store).open(forged, vaultID: "v", keys: [vault.recovery]) } throws: {
            VaultEnvelopeError.Code.writerNotMember.matches($0)
        }
        #expect(await store.highestCounter(for: "v") == 0)
        #expect(await store.anchor(for: "v") == nil)
    }

    @Test func theGenuineRevocationsEntriesAreBoundToTheNewEpochAndOpen() async throws {
        let vault = try await Self.vault()
        let rotated = try await vault.sealer.rotateDEK(
            TestSupport.plaintext, over: vault.created.state, keys: [vault.device, vault.recovery], rotatingVaultSecret: true)
        let store = InMemoryCounterStore()
        let opened = try await VaultOpener(counterStore: store).open(rotated.blob, vaultID: "v", keys: [vault.recovery])
        #expect(opened.state.identity?.epoch == 2)
        #expect(await store.anchor(for: "v") == rotated.state.identity?.anchor)
        // A symmetric entry wraps DEK ‖ vault_id ‖ epoch (64 bytes of RFC 3394); the device's public-key entry the DEK.
        let lengths = rotated.state.entries.map { ($0.algorithm, $0.encryptedKey.count) }
        #expect(lengths.contains { $0 == (.a256kw, 64) })
        #expect(lengths.contains { $0 == (.ecdhESA256KW, 40) })
    }

    @Test func anUnboundSymmetricWrapProvesItsWriterOnlyAtEpochOne() async throws {
        // Writers before the binding wrapped the bare DEK; at epoch 1 no revocation happened, so nobody removed holds
        // an older wrap, and such an entry still proves its writer (the committed epoch-1 anchored vectors).
        let vault = try await Self.vault()
        let identity = try #require(vault.created.state.identity)
        #expect(try WrapBinding.provesWriter(nil, entryAuthenticatesWriter: true, identity: identity))
        #expect(try !WrapBinding.provesWriter(nil, entryAuthenticatesWriter: true, identity: identity.rotated()))
        #expect(try !WrapBinding.provesWriter(nil, entryAuthenticatesWriter: false, identity: identity))
        // A binding to another epoch is a copy: refused, not merely unproven.
        #expect {
            try WrapBinding.provesWriter(WrapBinding(identity), entryAuthenticatesWriter: true, identity: identity.rotated())
        } throws: {
            VaultEnvelopeError.Code.writerNotMember.matches($0)
        }
    }

    @Test func anUnboundEntryAboveEpochOneOpensForAPinnedMemberAndAsksTheOthersToConfirm() async throws {
        // The earlier writer's epoch-3 vault (`anchored-epoch-3`, its A256KW entry unbound): a member that pinned
        // epoch 1 checks the writer by its anchor and reads on; a reader with nothing pinned must confirm (§11.4).
        let vault = try await Self.vault()
        let rotated = try await vault.sealer.rotateDEK(
            TestSupport.plaintext, over: vault.created.state, keys: [vault.device, vault.recovery], rotatingVaultSecret: true)
        let identity = try #require(rotated.state.identity)
        let unbound = try await vault.recovery.wrap(rotated.state.dek).labeled("Recovery code", created: TestSupport.clock()())
        let state = VaultState(
            vaultID: "v", envelope: rotated.state.envelope, entries: [unbound], identity: identity, dek: rotated.state.dek)
        let blob = try await VaultSealer(counterStore: InMemoryCounterStore(), clock: TestSupport.clock()).seal(
            TestSupport.plaintext, over: state
        ).blob
        let unpinned = InMemoryCounterStore()
        await #expect { try await VaultOpener(counterStore: unpinned).open(blob, vaultID: "v", keys: [vault.recovery]) } throws: {
            VaultEnvelopeError.Code.unconfirmedVault.matches($0)
        }
        #expect(await unpinned.anchor(for: "v") == nil)
        let member = InMemoryCounterStore()
        await member.pin(try #require(vault.created.state.identity).anchor, for: "v")
        let opened = try await VaultOpener(counterStore: member).open(blob, vaultID: "v", keys: [vault.recovery])
        #expect(opened.state.identity?.epoch == 2)
    }

    @Test func aBoundPayloadInAPublicKeyEntryIsRefused() async throws {
        let vault = try await Self.vault()
        let identity = try #require(vault.created.state.identity)
        let dek = SymmetricKey(size: .bits256)
        // A writer binds only symmetric entries; a bound payload wrapped to a public key is not one it made.
        let entry = try await vault.device.recipient.wrap(WrapBinding.payload(dek, for: vault.recovery, in: identity))
        await #expect { try WrapBinding.split(try await vault.device.unwrap(entry), symmetric: false) } throws: {
            VaultEnvelopeError.Code.unwrapFailed.matches($0)
        }
    }
}
