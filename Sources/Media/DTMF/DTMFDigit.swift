// The digit and event types shared by every DTMF path: RFC 4733 telephone-events,
// in-band tones and SIP INFO all end up as `DTMFEvent`s of `DTMFDigit`s.

/// One of the sixteen DTMF keys. The raw value is the RFC 4733 §3.2 event code
/// (0-9 for the digits, 10 `*`, 11 `#`, 12-15 `A`-`D`).
public enum DTMFDigit: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The digit keys 0-9 (event codes 0-9).
    case zero = 0, one, two, three, four, five, six, seven, eight, nine
    /// `*` (event 10) and `#` (event 11).
    case star = 10, pound = 11
    /// The fourth-column keys A-D (events 12-15), used by some IVRs and military networks.
    case a = 12, b = 13, c = 14, d = 15

    /// The digit for an RFC 4733 event code, or nil for codes above 15 (flash, modem tones).
    public init?(event: UInt8) {
        self.init(rawValue: event)
    }

    /// The digit for a key character: `0`-`9`, `*`, `#`, `A`-`D` (lowercase accepted).
    public init?(_ character: Character) {
        switch character {
        case "0"..."9":
            guard let value = character.asciiValue else { return nil }
            self.init(rawValue: value - 0x30)
        case "*": self = .star
        case "#": self = .pound
        case "A", "a": self = .a
        case "B", "b": self = .b
        case "C", "c": self = .c
        case "D", "d": self = .d
        default: return nil
        }
    }

    /// The RFC 4733 event code (0-15).
    public var event: UInt8 { rawValue }

    /// The key's character: `0`-`9`, `*`, `#`, `A`-`D`.
    public var character: Character {
        switch self {
        case .star: "*"
        case .pound: "#"
        case .a: "A"
        case .b: "B"
        case .c: "C"
        case .d: "D"
        default: Character(Unicode.Scalar(rawValue + 0x30))
        }
    }

    /// The key as a one-character string.
    public var description: String { String(character) }

    /// The low-group (row) frequency of the key's tone pair in Hz (Q.23).
    public var rowFrequency: Double {
        switch self {
        case .one, .two, .three, .a: 697
        case .four, .five, .six, .b: 770
        case .seven, .eight, .nine, .c: 852
        case .star, .zero, .pound, .d: 941
        }
    }

    /// The high-group (column) frequency of the key's tone pair in Hz (Q.23).
    public var columnFrequency: Double {
        switch self {
        case .one, .four, .seven, .star: 1209
        case .two, .five, .eight, .zero: 1336
        case .three, .six, .nine, .pound: 1477
        case .a, .b, .c, .d: 1633
        }
    }

    /// The digits of `string` in order; throws `.invalidDigit` naming the first character
    /// that is not a DTMF key.
    public static func digits(_ string: String) throws(DTMFError) -> [DTMFDigit] {
        var result: [DTMFDigit] = []
        result.reserveCapacity(string.count)
        for character in string {
            guard let digit = DTMFDigit(character) else { throw .invalidDigit(character) }
            result.append(digit)
        }
        return result
    }
}

/// What a DTMF source reports: a key went down, and later came up after `durationMs`.
/// Each digit yields exactly one `.began` followed by one `.ended`.
public enum DTMFEvent: Sendable, Hashable {
    /// A key press was recognised.
    case began(DTMFDigit)
    /// The key press finished; `durationMs` is its final length in milliseconds.
    case ended(DTMFDigit, durationMs: Int)

    /// The digit concerned.
    public var digit: DTMFDigit {
        switch self {
        case .began(let digit), .ended(let digit, _): digit
        }
    }
}

/// Up to three `DTMFEvent`s produced by one input, stored inline so the per-packet and
/// per-frame paths never allocate. (Three is the most one packet can cause: the previous
/// digit ends, and a new digit begins and ends.)
public struct DTMFEvents: RandomAccessCollection, Sendable, Hashable {
    // Slots past `count` hold a placeholder and are never read.
    private var first = DTMFEvent.began(.zero)
    private var second = DTMFEvent.began(.zero)
    private var third = DTMFEvent.began(.zero)
    /// The number of events held (0...3).
    public private(set) var count = 0

    /// No events.
    public init() {}

    /// The first index, 0.
    public var startIndex: Int { 0 }
    /// One past the last event.
    public var endIndex: Int { count }

    /// The event at `position` (0..<count).
    public subscript(position: Int) -> DTMFEvent {
        precondition(position >= 0 && position < count, "DTMFEvents index out of range")
        switch position {
        case 0: return first
        case 1: return second
        default: return third
        }
    }

    /// Adds `event`; the fourth and later events are dropped (no producer makes them).
    mutating func append(_ event: DTMFEvent) {
        switch count {
        case 0: first = event
        case 1: second = event
        case 2: third = event
        default: return
        }
        count += 1
    }
}

/// A DTMF request or report was invalid. Each case says what was wrong.
public enum DTMFError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not one of the DTMF keys 0-9 * # A-D.
    case invalidDigit(Character)
    /// A tone duration outside what the sender supports (1 ms ... 60 s).
    case invalidDuration(milliseconds: Int)
    /// A negative inter-digit gap.
    case invalidGap(milliseconds: Int)
    /// The digits would take the queue past its bound (`DTMFSender.Configuration.maxQueued`).
    case queueFull(limit: Int)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .invalidDigit(let character): "'\(character)' is not a DTMF digit (0-9 * # A-D)"
        case .invalidDuration(let ms): "DTMF duration \(ms) ms outside 1...60000 ms"
        case .invalidGap(let ms): "DTMF inter-digit gap \(ms) ms is negative"
        case .queueFull(let limit): "more than \(limit) DTMF digits would be waiting to be sent"
        }
    }
}
