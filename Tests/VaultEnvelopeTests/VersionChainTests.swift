import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultTestSupport

@testable import VaultEnvelope

/// Issue 26 point 7: every version names the digest of the version it was sealed over (`previous`, FORMAT.md
/// §11.10), so a version that does not follow the one a reader accepted just below it is a detected fork.
@Suite struct VersionChainTests {
    /// A member other than the creator: its own store, pinned to the vault, having opened `blob`.
    static func member(_ key: DeviceKEK, opening blob: Data, anchor: VaultAnchor) async throws
        -> (sealer: VaultSealer, opened: VaultOpener.OpenedVault)
    {
        let store = InMemoryCounterStore()
        await store.pin(anchor, for: "v")
        let opened = try await VaultOpener(counterStore: store).open(blob, vaultID: "v", keys: [key])
        return (VaultSealer(counterStore: store, clock: TestSupport.clock()), opened)
    }

    /// A's vault with members B and C: B writes version 2, which A reads; the server keeps it from C, which writes
    /// its own 2 over 1, then 3 over that (the branch that dropped B's write).
    struct Fork {
        let keyA: DeviceKEK
        let a: (sealer: VaultSealer, opener: VaultOpener, store: InMemoryCounterStore, created: VaultSealer.SealedVault)
        let identity: VaultIdentity
        let b: (sealer: VaultSealer, opened: VaultOpener.OpenedVault)
        let v2: VaultSealer.SealedVault
        let forked2: VaultSealer.SealedVault
        let forked3: VaultSealer.SealedVault

        init() async throws {
            let (keyA, keyB, keyC) = (try DeviceKEK.generate(), try DeviceKEK.generate(), try DeviceKEK.generate())
            self.keyA = keyA
            a = try await WriterAuthenticationTests.member(keyA, extra: [.init(keyB, label: "B"), .init(keyC, label: "C")])
            identity = try #require(a.created.state.identity)
            b = try await VersionChainTests.member(keyB, opening: a.created.blob, anchor: identity.anchor)
            v2 = try await b.sealer.seal(TestSupport.plaintext, over: b.opened.state)
            try await b.sealer.markAccepted(v2)
            _ = try await a.opener.open(v2.blob, vaultID: "v", keys: [keyA])
            let c = try await VersionChainTests.member(keyC, opening: a.created.blob, anchor: identity.anchor)
            forked2 = try await c.sealer.seal(TestSupport.plaintext, over: c.opened.state)
            try await c.sealer.markAccepted(forked2)
            forked3 = try await c.sealer.seal(TestSupport.plaintext, over: forked2.state)
        }
    }

    @Test func aVersionThatDoesNotFollowTheOneAcceptedBelowItIsAForkAndNothingIsStored() async throws {
        let fork = try await Fork()
        let (keyA, a, identity, b, v2, forked3) = (fork.keyA, fork.a, fork.identity, fork.b, fork.v2, fork.forked3)
        #expect(v2.state.envelope.previous == (try SeenVersions.digest(of: a.created.state.envelope)))
        let before = await WriterAuthenticationTests.stored(a.store)
        await #expect { try await a.opener.open(forked3.blob, vaultID: "v", keys: [keyA]) } throws: {
            VaultEnvelopeError.Code.forkDetected.matches($0)
        }
        // A member's version 3 without the link (as an earlier writer, or anyone stripping it, would write) too.
        let unlinkedStore = InMemoryCounterStore()
        await unlinkedStore.advance("v", to: 2)
        let unlinked = try await VaultSealer(counterStore: unlinkedStore, clock: TestSupport.clock()).create(
            TestSupport.plaintext, vaultID: "v", recipients: [.init(keyA, label: "A")], identity: identity)
        #expect(unlinked.state.envelope.previous == nil)
        await #expect { try await a.opener.open(unlinked.blob, vaultID: "v", keys: [keyA]) } throws: {
            VaultEnvelopeError.Code.forkDetected.matches($0)
        }
        #expect(await WriterAuthenticationTests.stored(a.store) == before)
        // B's version 3, over the version 2 A read, follows it.
        let v3 = try await b.sealer.seal(TestSupport.plaintext, over: v2.state)
        #expect(try await a.opener.open(v3.blob, vaultID: "v", keys: [keyA]).state.counter == 3)
    }

    /// A member that must confirm again (its pinned epoch fell behind, say) runs the same fork checks: served the
    /// branch that dropped a version it accepted, it refuses it, and keeps the digest that shows the fork. Before,
    /// `openForConfirmation` and `confirm` checked neither, and the confirmation overwrote the digest kept.
    @Test func aConfirmationOfAForkedVersionIsRefusedAsAnOpenIs() async throws {
        let fork = try await Fork()
        let (keyA, a, b, v2, forked2, forked3) = (fork.keyA, fork.a, fork.b, fork.v2, fork.forked2, fork.forked3)
        let before = await WriterAuthenticationTests.stored(a.store)
        for forked in [forked2, forked3] {
            await #expect { try await a.opener.openForConfirmation(forked.blob, vaultID: "v", keys: [keyA]) } throws: {
                VaultEnvelopeError.Code.forkDetected.matches($0)
            }
        }
        #expect(await WriterAuthenticationTests.stored(a.store) == before)
        // Opened for confirmation before the store accepted the other branch: confirming it checks again.
        let fresh = VaultOpener(counterStore: InMemoryCounterStore())
        let pendingFork = try await fresh.openForConfirmation(forked2.blob, vaultID: "v", keys: [keyA])
        let pendingV2 = try await fresh.openForConfirmation(v2.blob, vaultID: "v", keys: [keyA])
        try await fresh.confirm(pendingV2, code: try Self.code(pendingV2, keyA), entryKekID: keyA.kekID)
        await #expect { try await fresh.confirm(pendingFork, code: try Self.code(pendingFork, keyA), entryKekID: keyA.kekID) } throws: {
            VaultEnvelopeError.Code.forkDetected.matches($0)
        }
        let v3 = try await b.sealer.seal(TestSupport.plaintext, over: v2.state)
        #expect(try await a.opener.openForConfirmation(v3.blob, vaultID: "v", keys: [keyA]).state.counter == 3)
    }

    /// The confirmation code the approver shows for `opened`'s entry of `key`.
    static func code(_ opened: VaultOpener.OpenedVault, _ key: DeviceKEK) throws -> String {
        let identity = try #require(opened.state.identity)
        return identity.confirmationCode(forEntry: key.kekID, blobDigest: try #require(opened.confirmationDigest))
    }

    @Test func aReaderThatMissedVersionsChecksNoLinkAndTheMemberIsCheckedOnlyWhereItCan() async throws {
        // A reader that accepted 1 and is served 3 cannot check 3's link to a 2 it never saw: the link is still
        // covered by 3's digest, which the fingerprint shows (FORMAT.md §11.10).
        let (keyA, keyB) = (try DeviceKEK.generate(), try DeviceKEK.generate())
        let a = try await WriterAuthenticationTests.member(keyA, extra: [.init(keyB, label: "B")])
        let b = try await Self.member(keyB, opening: a.created.blob, anchor: try #require(a.created.state.identity).anchor)
        let v2 = try await b.sealer.seal(TestSupport.plaintext, over: b.opened.state)
        try await b.sealer.markAccepted(v2)
        let v3 = try await b.sealer.seal(TestSupport.plaintext, over: v2.state)
        #expect(try await a.opener.open(v3.blob, vaultID: "v", keys: [keyA]).state.counter == 3)
    }

    @Test func previousIsThirtyTwoBytesInABlobWithAnIdentity() async throws {
        let key = try DeviceKEK.generate()
        let a = try await WriterAuthenticationTests.member(key)
        let next = try await a.sealer.seal(TestSupport.plaintext, over: a.created.state)
        let text = String(decoding: next.blob, as: UTF8.self)
        let encoded = Base64URL.encode(try #require(next.state.envelope.previous))
        let short = text.replacingOccurrences(of: "\"previous\":\"\(encoded)\"", with: "\"previous\":\"AAAA\"")
        #expect(short != text)
        #expect { try VaultEnvelope(parsing: Data(short.utf8)) } throws: { VaultEnvelopeError.Code.malformed.matches($0) }
    }
}
