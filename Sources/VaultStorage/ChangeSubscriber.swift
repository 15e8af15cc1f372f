/// What a change feed calls: the subscriber's two closures, held by reference.
///
/// A feed keeps this object in its lock, never the bare closures: a closure or a tuple of closures read through
/// `Mutex.withLock`'s generic `inout` comes back re-wrapped in two reabstraction thunks each time, so every
/// announcement left the next a longer chain to call through (stack and heap growing with the saves served). A
/// class reference passes through generics unchanged.
final class ChangeSubscriber: Sendable {
    /// Called with each tag announced.
    let onChange: @Sendable (String) -> Void
    /// Called when announcements may have been missed, so every waiter must re-read.
    let onMissed: @Sendable () -> Void
    /// Called when the feed stops hearing announcements (until `onMissed` says it listens again).
    let onLost: @Sendable () -> Void

    init(
        onChange: @escaping @Sendable (String) -> Void, onMissed: @escaping @Sendable () -> Void,
        onLost: @escaping @Sendable () -> Void
    ) {
        self.onChange = onChange
        self.onMissed = onMissed
        self.onLost = onLost
    }
}
