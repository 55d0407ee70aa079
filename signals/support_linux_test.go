package signals

const dieBySupported = true
