/// The answering-machine set: people's short answers and machines' long greetings with a
/// beep after, in seven espeak-ng voices (en-us, en-gb, de, fr-fr, es, it, nl), at 8 and
/// 16 kHz, quiet, noisy and through µ-law; fax and modem tones; a dead line. Data only:
/// `AMDSample.render` makes the audio. The tests, the simulator and `BENCH amd` share it.
public enum AMDSamples {
    /// The whole set: people, machines, faxes and a dead line.
    public static let all: [AMDSample] =
        people + machines + faxes + [
            AMDSample(name: "dead line", content: .silence, expected: .machine)
        ]

    /// People: a word or a short question, then silence.
    public static let people: [AMDSample] = [
        AMDSample(name: "en-us Hello?", content: .person(voice: "en-us", text: "Hello?"), expected: .human),
        AMDSample(name: "en-us Hi", content: .person(voice: "en-us", text: "Hi"), expected: .human, leadMs: 700),
        AMDSample(
            name: "en-gb Yes, hello, who is this?",
            content: .person(voice: "en-gb", text: "Yes, hello, who is this?"), expected: .human),
        AMDSample(
            name: "en-us Good morning, this is Anna",
            content: .person(voice: "en-us", text: "Good morning, this is Anna"), expected: .human, speed: 185),
        AMDSample(
            name: "en-gb Hello?", content: .person(voice: "en-gb", text: "Hello?"), expected: .human, leadMs: 250),
        AMDSample(name: "de Hallo?", content: .person(voice: "de", text: "Hallo?"), expected: .human),
        AMDSample(name: "de Ja, bitte?", content: .person(voice: "de", text: "Ja, bitte?"), expected: .human),
        AMDSample(name: "fr Allô ?", content: .person(voice: "fr-fr", text: "Allô ?"), expected: .human),
        AMDSample(
            name: "fr Oui, bonjour ?", content: .person(voice: "fr-fr", text: "Oui, bonjour ?"), expected: .human),
        AMDSample(name: "es ¿Diga?", content: .person(voice: "es", text: "¿Diga?"), expected: .human),
        AMDSample(
            name: "es Hola, ¿quién es?", content: .person(voice: "es", text: "Hola, ¿quién es?"), expected: .human),
        AMDSample(
            name: "en-us Hello? at 16 kHz", content: .person(voice: "en-us", text: "Hello?"), expected: .human,
            sampleRate: 16_000),
        AMDSample(
            name: "en-us Hello, who is this? on a noisy line",
            content: .person(voice: "en-us", text: "Hello, who is this?"), expected: .human, noise: -35),
        AMDSample(
            name: "en-us Hi, quiet line", content: .person(voice: "en-us", text: "Hi"), expected: .human,
            speechPeak: -20),
        AMDSample(name: "it Pronto?", content: .person(voice: "it", text: "Pronto?"), expected: .human),
        AMDSample(
            name: "nl Met Jan, hallo?", content: .person(voice: "nl", text: "Met Jan, hallo?"), expected: .human,
            ulaw: true),
        AMDSample(
            name: "en-us Hello? | Hello?", content: .person(voice: "en-us", text: "Hello? | Hello?"),
            expected: .human),
        AMDSample(
            name: "en-gb Hello? slowly through µ-law", content: .person(voice: "en-gb", text: "Hello?"),
            expected: .human, speed: 120, ulaw: true)
    ]

    /// Machines: greetings of several seconds, then a beep.
    public static let machines: [AMDSample] = [
        AMDSample(
            name: "en-us voicemail of John Smith",
            content: .machine(
                voice: "en-us",
                text: "Hi, you have reached the voicemail of John Smith. I am not available right now, "
                    + "please leave a message after the tone.", beepHz: 1000), expected: .machine),
        AMDSample(
            name: "en-gb Anna and Tom",
            content: .machine(
                voice: "en-gb",
                text: "Hello, you've reached Anna and Tom. We can't come to the phone right now. "
                    + "Please leave your name and number after the beep.", beepHz: 1000), expected: .machine,
            leadMs: 900),
        AMDSample(
            name: "en-us carrier voicemail",
            content: .machine(
                voice: "en-us",
                text: "The person you are calling is not available. At the tone, please record your message.",
                beepHz: 1400), expected: .machine),
        AMDSample(
            name: "de Anrufbeantworter",
            content: .machine(
                voice: "de",
                text: "Hallo, hier ist der Anrufbeantworter von Familie Müller. Wir sind gerade nicht zu Hause. "
                    + "Bitte sprechen Sie nach dem Signalton.", beepHz: 1000), expected: .machine),
        AMDSample(
            name: "fr messagerie",
            content: .machine(
                voice: "fr-fr",
                text: "Bonjour, vous êtes bien sur la messagerie de Marie Dupont. Je ne suis pas disponible "
                    + "pour le moment, laissez-moi un message après le bip sonore.", beepHz: 1000),
            expected: .machine),
        AMDSample(
            name: "es buzón",
            content: .machine(
                voice: "es",
                text: "Hola, has llamado a Carlos García. En este momento no puedo atender tu llamada. "
                    + "Deja tu mensaje después de la señal.", beepHz: 1000), expected: .machine),
        AMDSample(
            name: "en-us voicemail at 16 kHz",
            content: .machine(
                voice: "en-us",
                text: "Hi, you have reached the voicemail of John Smith. Please leave a message after the tone.",
                beepHz: 1000), expected: .machine, sampleRate: 16_000),
        AMDSample(
            name: "en-gb voicemail on a noisy line",
            content: .machine(
                voice: "en-gb",
                text: "Sorry, we missed your call. Leave a message after the tone and we will call you back.",
                beepHz: 1000), expected: .machine, noise: -35),
        AMDSample(
            name: "nl voicemail through µ-law",
            content: .machine(
                voice: "nl",
                text: "Hallo, u spreekt met de voicemail van Jan de Vries. Ik ben er momenteel niet, "
                    + "spreek een bericht in na de piep.", beepHz: 1000), expected: .machine, ulaw: true),
        AMDSample(
            name: "it segreteria, fast",
            content: .machine(
                voice: "it",
                text: "Ciao, sono Giulia. Al momento non posso rispondere, lasciate un messaggio dopo il segnale.",
                beepHz: 800), expected: .machine, speed: 210)
    ]

    /// Fax and modem tones.
    public static let faxes: [AMDSample] = [
        AMDSample(name: "fax CNG", content: .faxCalling, expected: .fax, leadMs: 200),
        AMDSample(name: "fax CED", content: .faxAnswer(modulated: false), expected: .fax, leadMs: 300),
        AMDSample(name: "modem ANSam", content: .faxAnswer(modulated: true), expected: .fax, leadMs: 300),
        AMDSample(
            name: "fax CNG at 16 kHz", content: .faxCalling, expected: .fax, leadMs: 200, sampleRate: 16_000)
    ]

    /// The gap between a greeting and its beep, and the beep's length.
    public static let beepGapMs = 600.0
    public static let beepMs = 300.0
    /// The tones' (beeps', fax tones') peak, dBFS.
    public static let toneLevel = -12.0
}
