// irisgw dialer page (docs/api.md, "The dialer page"). No build step, no dependencies.
// The page holds a page token (never the API key): it comes in the URL fragment
// (/app#token=...) or the token field, and admits the page to one routing id's calls.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const events = [];
  const state = {
    token: null, routingId: null, expiresAt: 0, ws: null, eventsOpen: false,
    pc: null, local: null, roomId: null, status: null, earlyMedia: false, held: false, muted: false,
    ended: null, error: null, offerSdp: null, answerSdp: null, remoteDescriptionError: null,
    incoming: null, gone: new Set(), audio: null, localAnalyser: null, remoteAnalyser: null, busy: false,
  };

  // --- the token -------------------------------------------------------------------------
  // version(1) expires(8, Unix s) length(2) subject mac(32), URL-safe base64; the subject is
  // the routing id, then (a scoped token) LF profiles LF permissions. The page only reads it;
  // the gateway checks the signature.
  function decodeToken(token) {
    try {
      const b64 = token.replace(/-/g, '+').replace(/_/g, '/');
      const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
      if (bin.length < 43 || bin.charCodeAt(0) !== 1) return null;
      let expiresAt = 0;
      for (let i = 1; i < 9; i++) expiresAt = expiresAt * 256 + bin.charCodeAt(i);
      const length = bin.charCodeAt(9) * 256 + bin.charCodeAt(10);
      if (bin.length !== 11 + length + 32) return null;
      const bytes = Uint8Array.from(bin.slice(11, 11 + length), (c) => c.charCodeAt(0));
      return { routingId: new TextDecoder().decode(bytes).split('\n')[0], expiresAt };
    } catch (e) {
      return null;
    }
  }

  function useToken(token) {
    token = (token || '').trim();
    const decoded = decodeToken(token);
    if (!decoded) {
      setStatus('That is not a page token', 'error');
      return false;
    }
    state.token = token;
    state.routingId = decoded.routingId;
    state.expiresAt = decoded.expiresAt;
    const until = new Date(decoded.expiresAt * 1000);
    $('identity').textContent = `Routing id ${decoded.routingId}; token valid until ${until.toLocaleString()}.`;
    if (decoded.expiresAt * 1000 <= Date.now()) {
      setStatus('The page token has expired: ask for a new one', 'error');
      return false;
    }
    connectEvents();
    setStatus('Ready');
    updateButtons();
    return true;
  }

  // --- the API ---------------------------------------------------------------------------
  async function api(method, path, body) {
    const headers = { Authorization: 'Bearer ' + state.token };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(path, {
      method, headers, cache: 'no-store', body: body === undefined ? undefined : JSON.stringify(body),
    });
    let data = null;
    try { data = await res.json(); } catch (e) { /* no JSON body */ }
    if (!res.ok) {
      const err = new Error((data && data.error && data.error.message) || `HTTP ${res.status}`);
      err.status = res.status;
      err.code = data && data.error ? data.error.code : undefined;
      throw err;
    }
    return data;
  }

  function connectEvents() {
    if (state.ws) { state.ws.onclose = null; state.ws.close(); }
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const url = `${proto}//${location.host}/v1/events?routingId=${encodeURIComponent(state.routingId)}` +
      `&access_token=${encodeURIComponent(state.token)}`;
    const ws = new WebSocket(url);
    state.ws = ws;
    state.eventsReady = new Promise((resolve) => {
      ws.onopen = () => { state.eventsOpen = true; resolve(true); };
      ws.onerror = () => resolve(false);
    });
    ws.onmessage = (m) => {
      try { onEvent(JSON.parse(m.data)); } catch (e) { console.warn('bad event', e); }
    };
    ws.onclose = () => {
      state.eventsOpen = false;
      // Come back while the token lasts (a gateway restart, a dropped connection).
      if (state.ws === ws && state.expiresAt * 1000 > Date.now() + 2000) setTimeout(() => { if (state.ws === ws) connectEvents(); }, 2000);
    };
  }

  // --- events ----------------------------------------------------------------------------
  function onEvent(e) {
    events.push(e);
    logLine(describe(e));
    if (e.event === 'onNotification') return onNotification(e);
    if (!state.roomId || e.roomId !== state.roomId) return;  // replayed once createWithTN answers
    apply(e);
  }

  function apply(e) {
    switch (e.event) {
      case 'onSessionSIPStatus':
        state.status = e.status;
        if (e.status === 'Hold') state.held = e.by !== 'remote' || state.held;
        if (e.status === 'Connected') { state.held = false; state.earlyMedia = false; }
        if (e.earlyMedia) state.earlyMedia = true;
        showSessionStatus(e);
        break;
      case 'onSessionEarlyMedia':
        state.earlyMedia = true;
        if (state.status === 'Connecting' || !state.status) setStatus('Connecting (early media)');
        break;
      case 'onStreamQualityIndicator':
        if (state.status === 'Connected') setStatus(`Connected (${e.codec || '?'}, ${e.quality || ''})`, 'connected');
        break;
      case 'onSessionDTMF':
        logLine(`digit ${e.digit} from the far end`);
        break;
      case 'onSessionError':
        state.error = { code: e.code, message: e.message, sip: e.sip };
        setStatus(`Error ${e.code}: ${e.message}${sipText(e.sip)}`, 'error');
        break;
      case 'onSessionEnded':
        state.ended = { reason: e.reason, sip: e.sip, durationSec: e.durationSec };
        setStatus(`Ended: ${e.reason}${sipText(e.sip)}` + (state.error ? ` (error ${state.error.code})` : ''),
          e.reason === 'completed' ? '' : 'error');
        endMedia();
        break;
      default:
        break;
    }
    updateButtons();
  }

  function showSessionStatus(e) {
    switch (e.status) {
      case 'Initializing': setStatus('Initializing'); break;
      case 'Connecting': setStatus(e.earlyMedia || state.earlyMedia ? 'Connecting (early media)' : 'Connecting' + sipText(e.sip)); break;
      case 'Connected': setStatus('Connected', 'connected'); break;
      case 'Hold': setStatus(`Hold (${e.by === 'remote' ? 'by the far end' : 'by you'})`); break;
      case 'Disconnected': setStatus('Disconnected' + sipText(e.sip)); break;
      default: setStatus(String(e.status));
    }
  }

  function sipText(sip) { return sip ? ` (SIP ${sip.code} ${sip.reason || ''}`.trimEnd() + ')' : ''; }

  function describe(e) {
    const parts = [e.event];
    for (const k of ['status', 'earlyMedia', 'by', 'reason', 'code', 'message', 'digit', 'codec', 'type']) {
      if (e[k] !== undefined) parts.push(`${k}=${e[k]}`);
    }
    if (e.sip) parts.push(`sip=${e.sip.code}`);
    return parts.join(' ');
  }

  function onNotification(e) {
    if (e.type === 'notify') {
      const caller = (e.userdata && e.userdata.data && e.userdata.data.cid) || 'unknown';
      const did = (e.userdata && e.userdata.data && e.userdata.data.tar) || '';
      state.incoming = { roomId: e.roomid, roomToken: e.roomtoken, caller, did };
      showIncoming(state.incoming);
      if (!state.roomId) setStatus(`Incoming call from ${caller}`);
    } else if (e.type === 'cancel') {
      state.gone.add(e.roomid);
      if (!state.incoming || state.incoming.roomId !== e.roomid) return updateButtons();
      setStatus(`Missed call from ${state.incoming.caller}`);
      clearIncoming();
    }
    updateButtons();
  }

  function showIncoming(incoming) {
    state.incoming = incoming;
    $('incoming-caller').textContent = incoming.caller;
    $('incoming-did').textContent = incoming.did;
    $('incoming').hidden = false;
  }

  function clearIncoming() {
    state.incoming = null;
    $('incoming').hidden = true;
  }

  // --- media -----------------------------------------------------------------------------
  // A microphone track, an offer, every ICE candidate gathered (no trickle: the API takes
  // one SDP).
  async function preparePeer() {
    endMedia();
    const local = await navigator.mediaDevices.getUserMedia({ audio: true, video: false });
    const pc = new RTCPeerConnection({ iceServers: [] });
    for (const track of local.getAudioTracks()) pc.addTrack(track, local);
    pc.ontrack = (ev) => attachRemote(ev.streams[0] || new MediaStream([ev.track]));
    state.pc = pc;
    state.local = local;
    state.localAnalyser = analyserFor(local);
    const offer = await pc.createOffer({ offerToReceiveAudio: true });
    await pc.setLocalDescription(offer);
    await iceGatheringComplete(pc, 5000);
    state.offerSdp = pc.localDescription.sdp;
    return pc;
  }

  function iceGatheringComplete(pc, timeoutMs) {
    if (pc.iceGatheringState === 'complete') return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => { if (pc.iceGatheringState === 'complete') resolve(); };
      pc.addEventListener('icegatheringstatechange', done);
      setTimeout(resolve, timeoutMs);
    });
  }

  async function setAnswer(sdp) {
    state.answerSdp = sdp;
    try {
      await state.pc.setRemoteDescription({ type: 'answer', sdp });
      state.remoteDescriptionError = null;
      return true;
    } catch (err) {
      state.remoteDescriptionError = String(err && err.message ? err.message : err);
      return false;
    }
  }

  function attachRemote(stream) {
    const audio = $('remote');
    audio.srcObject = stream;  // Chrome feeds a remote track to WebAudio only while it plays
    audio.play().catch(() => {});
    state.remoteAnalyser = analyserFor(stream);
  }

  function analyserFor(stream) {
    if (!state.audio) state.audio = new AudioContext();
    state.audio.resume().catch(() => {});
    const analyser = state.audio.createAnalyser();
    analyser.fftSize = 8192;
    state.audio.createMediaStreamSource(stream).connect(analyser);
    return analyser;
  }

  // Goertzel over the analyser's last fftSize samples: the amplitude (0-1) of one frequency.
  function toneLevel(analyser, hz) {
    if (!analyser) return 0;
    const samples = new Float32Array(analyser.fftSize);
    analyser.getFloatTimeDomainData(samples);
    const k = (2 * Math.PI * hz) / state.audio.sampleRate;
    const coeff = 2 * Math.cos(k);
    let s1 = 0, s2 = 0;
    for (const x of samples) { const s0 = x + coeff * s1 - s2; s2 = s1; s1 = s0; }
    const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
    return (2 * Math.sqrt(Math.max(power, 0))) / samples.length;
  }

  function endMedia() {
    if (state.pc) { state.pc.close(); state.pc = null; }
    if (state.local) { for (const t of state.local.getTracks()) t.stop(); state.local = null; }
    state.localAnalyser = null;
    state.remoteAnalyser = null;
    state.muted = false;
  }

  // --- actions ---------------------------------------------------------------------------
  function startSession() {
    state.roomId = null; state.status = null; state.ended = null; state.error = null; state.earlyMedia = false;
    state.held = false; state.muted = false; state.answerSdp = null; state.remoteDescriptionError = null;
  }

  // Events that came before the API's answer named the room.
  function replay(roomId) {
    state.roomId = roomId;
    for (const e of events) if (e.roomId === roomId && e.event !== 'onNotification') apply(e);
  }

  async function afterAnswer(response) {
    if (!response.media || !response.media.sdp) return;
    if (!(await setAnswer(response.media.sdp))) {
      // The gateway's answer is not one this browser can use: end the call rather than leave it silent.
      setStatus(`Media refused: ${state.remoteDescriptionError}`, 'error');
      logLine(`the browser refused the gateway's answer: ${state.remoteDescriptionError}`);
      if (!state.ended) api('DELETE', `/v1/sessions/${state.roomId}`).catch(() => {});
    }
  }

  async function call() {
    const target = $('number').value.trim();
    if (!state.token || !target || state.busy) return;
    state.busy = true;
    startSession();
    updateButtons();
    try {
      await state.eventsReady;  // subscribed before the session exists: no event is missed
      setStatus('Preparing the microphone');
      await preparePeer();
      setStatus(`Calling ${target}`);
      const response = await api('POST', '/v1/sessions', {
        targetTN: target, sourceTN: $('from').value.trim() || '+15557654321', routingId: state.routingId,
        media: { sdp: state.offerSdp },
      });
      replay(response.roomId);
      await afterAnswer(response);
    } catch (err) {
      fail(err);
    } finally {
      state.busy = false;
      updateButtons();
    }
  }

  async function answer() {
    const incoming = state.incoming;
    if (!incoming || state.busy) return;
    state.busy = true;
    startSession();
    clearIncoming();
    try {
      setStatus(`Answering ${incoming.caller}`);
      await preparePeer();
      const response = await api('POST', `/v1/sessions/${encodeURIComponent(incoming.roomId)}/join`, {
        roomToken: incoming.roomToken, media: { sdp: state.offerSdp },
      });
      replay(response.roomId);
      await afterAnswer(response);
    } catch (err) {
      fail(err);
      // Not joined and still ringing: the call can still be answered again or rejected.
      if (!state.roomId && !state.gone.has(incoming.roomId)) showIncoming(incoming);
    } finally {
      state.busy = false;
      updateButtons();
    }
  }

  async function reject() {
    const incoming = state.incoming;
    if (!incoming) return;
    clearIncoming();
    try {
      await api('POST', `/v1/sessions/${encodeURIComponent(incoming.roomId)}/reject`, { roomToken: incoming.roomToken, reason: 'decline' });
      setStatus(`Rejected the call from ${incoming.caller}`);
    } catch (err) {
      fail(err);
    }
    updateButtons();
  }

  async function verb(name, body) {
    if (!state.roomId) return;
    try {
      await api('POST', `/v1/sessions/${encodeURIComponent(state.roomId)}/${name}`, body);
      logLine(`${name} sent`);
    } catch (err) {
      fail(err, false);
    }
  }

  async function hangup() {
    if (!state.roomId) { endMedia(); return; }
    try { await api('DELETE', `/v1/sessions/${encodeURIComponent(state.roomId)}`); } catch (err) { fail(err, false); }
  }

  function toggleHold() { verb(state.status === 'Hold' && state.held ? 'unhold' : 'hold'); }

  function toggleMute() {
    state.muted = !state.muted;
    if (state.local) for (const t of state.local.getAudioTracks()) t.enabled = !state.muted;
    verb(state.muted ? 'mute' : 'unmute');
    updateButtons();
  }

  function fail(err, endsCall = true) {
    const code = err && err.code !== undefined ? ` (${err.code})` : '';
    const text = err && err.status === 401 && err.code === -105 ? 'The page token has expired: ask for a new one' : `${err.message || err}${code}`;
    state.error = { code: err && err.code, message: err && err.message, httpStatus: err && err.status };
    setStatus(`Error: ${text}`, 'error');
    if (endsCall && !state.roomId) endMedia();
  }

  // --- the view --------------------------------------------------------------------------
  function setStatus(text, kind = '') {
    const el = $('status');
    el.textContent = text;
    el.className = 'status' + (kind ? ' ' + kind : '');
  }

  function logLine(text) {
    const li = document.createElement('li');
    li.textContent = `${new Date().toLocaleTimeString()} ${text}`;
    $('log').appendChild(li);
  }

  function updateButtons() {
    const live = !!state.roomId && !state.ended;
    const connected = live && (state.status === 'Connected' || state.status === 'Hold');
    $('call').disabled = !state.token || live || state.busy;
    $('hangup').disabled = !live && !state.busy;
    $('hold').disabled = !connected;
    $('hold').textContent = state.status === 'Hold' && state.held ? 'Unhold' : 'Hold';
    $('mute').disabled = !connected;
    $('mute').textContent = state.muted ? 'Unmute' : 'Mute';
    $('mute').classList.toggle('on', state.muted);
    for (const b of $('keypad').querySelectorAll('button')) b.disabled = !(connected || (live && state.earlyMedia));
    $('answer').disabled = !state.incoming || state.busy || live;
  }

  function buildKeypad() {
    for (const digit of '123A456B789C*0#D') {
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = digit;
      b.dataset.digit = digit;
      b.addEventListener('click', () => verb('dtmf', { tones: digit }));
      $('keypad').appendChild(b);
    }
  }

  // --- start -----------------------------------------------------------------------------
  buildKeypad();
  $('use-token').addEventListener('click', () => useToken($('token').value));
  $('call').addEventListener('click', call);
  $('hangup').addEventListener('click', hangup);
  $('hold').addEventListener('click', toggleHold);
  $('mute').addEventListener('click', toggleMute);
  $('answer').addEventListener('click', answer);
  $('reject').addEventListener('click', reject);
  $('number').addEventListener('keydown', (ev) => { if (ev.key === 'Enter') call(); });

  // The operator hands the token over in the fragment (never sent to a server, never logged);
  // it is taken out of the address bar and history at once.
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.get('token')) {
    $('token').value = fragment.get('token');
    history.replaceState(null, '', location.pathname + location.search);
    useToken(fragment.get('token'));
  }
  if (fragment.get('number')) $('number').value = fragment.get('number');
  updateButtons();

  /// For tests (Tests/EndToEndTests/DialerPageTests.swift): read-only views of the page's state.
  window.irisgwTest = {
    status: () => $('status').textContent,
    state: () => ({
      status: state.status, roomId: state.roomId, routingId: state.routingId, earlyMedia: state.earlyMedia,
      held: state.held, muted: state.muted, ended: state.ended, error: state.error, eventsOpen: state.eventsOpen,
      offerSdp: state.offerSdp, answerSdp: state.answerSdp, remoteDescriptionError: state.remoteDescriptionError,
      incoming: state.incoming ? { roomId: state.incoming.roomId, caller: state.incoming.caller } : null,
      iceConnectionState: state.pc ? state.pc.iceConnectionState : null,
    }),
    events,
    remoteToneLevel: (hz) => toneLevel(state.remoteAnalyser, hz),
    localToneLevel: (hz) => toneLevel(state.localAnalyser, hz),
    useToken,
    call, answer, reject, hangup, toggleHold, toggleMute, dtmf: (tones) => verb('dtmf', { tones }),
  };
})();
