// Run before `npm start` and `npm run dev`: the wrong Node.js stops here with one line, before anything is built.
// package.json "engines" and .npmrc's engine-strict say the same to `npm install`.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  console.error(
    `Mnemo needs Node.js 22.12 or newer (24 LTS recommended); this is ${process.versions.node}. ` +
      "Install it from nodejs.org or with your version manager (nvm install 24), then run npm install again.",
  );
  process.exit(1);
}
