import Formats

/// Keys of a settings file kept as written, for the layer that owns them to read later with
/// the file's name in its errors (the serve file's control API keys, read by ControlAPI).
package struct ProfileSection: Sendable, Equatable {
    /// The file's name as errors show it.
    package var file: String
    /// The keys, in document order.
    package var members: [JSON5Member]

    package init(file: String, members: [JSON5Member]) {
        self.file = file
        self.members = members
    }

    /// The keys as a top-level object of the file, to read with `ProfileSchema`'s checks.
    package var fields: ProfileSchema.ObjectFields {
        ProfileSchema.ObjectFields(schema: ProfileSchema(file: file), path: "", members: members)
    }
}
