import Dispatch
import Foundation

/// Runs `body(index)` for each index below `count`, each on a thread of its own, and returns
/// when every one has returned. For workers that mostly wait (on a peer, a socket, an
/// event): `DispatchQueue.concurrentPerform` would run only as many at once as there are
/// cores, so on a 2-core machine "10 calls at once" would be 2.
public func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<max(0, count) {
        group.enter()
        Thread {
            defer { group.leave() }
            body(index)
        }.start()
    }
    group.wait()
}
