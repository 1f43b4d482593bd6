// The resolver's types (configuration, failures, records) appear in SIP's API: users of SIP
// see them through this module.
@_exported import DNS
