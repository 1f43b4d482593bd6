/// Which member holds which room, as the event stream tells it: a room's events all come from
/// the member holding it. Bounded: past `limit` rooms, those whose session ended go first, and
/// if that is not enough, everything (the directory in Redis stays the reference).
struct HolderCache {
    private var rooms: [String: (member: NodeMember, ended: Bool)] = [:]
    let limit: Int

    init(limit: Int = 50_000) {
        self.limit = limit
    }

    subscript(room: String) -> NodeMember? { rooms[room]?.member }

    mutating func learn(room: String, member: NodeMember, ended: Bool) {
        rooms[room] = (member, ended || rooms[room]?.ended == true)
        guard rooms.count > limit else { return }
        rooms = rooms.filter { !$0.value.ended }
        if rooms.count > limit { rooms = [:] }
    }

    var count: Int { rooms.count }
}
