/* sitegen page-view beacon: reads data-* of its own script tag, POSTs one event per view; sends nothing under DNT/GPC; never throws.
   Visitor id: sessionStorage, or localStorage if data-visitor="persistent". Landing URL: no query but utm_*. */
(function(w,n){try{
var s=document.currentScript,d=s&&s.dataset,L=location,done=0;
if(!d||!d.endpoint||!d.key||n.doNotTrack=="1"||n.doNotTrack=="yes"||w.doNotTrack=="1"||n.msDoNotTrack=="1"||n.globalPrivacyControl===true)return;
var id=function(){var a=new Uint8Array(16);crypto.getRandomValues(a);return Array.prototype.map.call(a,function(b){return(b+256).toString(16).slice(1)}).join("")};
var vid=function(){var k="sitegen:visitor",v,S;try{S=d.visitor=="persistent"?w.localStorage:w.sessionStorage;v=S.getItem(k);if(!v||v.length<6||v.length>128){v=id();S.setItem(k,v)}}catch(e){v=v||id()}return v};
var send=function(){try{if(done)return;done=1;
var t=d.pageType,p={type:t=="article"||t=="agent"?t:t=="workspace"||t=="home"||t=="index"?"workspace":"unknown",path:L.pathname,host:L.host},b={visitorId:vid()},u={},c={},has=0,q=new URLSearchParams(L.search);
if(d.articleId)b.articleId=d.articleId;if(d.agentId)b.agentId=d.agentId;
if(d.siteSlug)p.siteSlug=d.siteSlug;if(d.articleSlug)p.articleSlug=d.articleSlug;b.page=p;
q.forEach(function(v,k){if(k.indexOf("utm_")==0){u[k]=v;has=1}});if(has)b.utm=u;
if(w.screen)c.screen=screen.width+"x"+screen.height;if(n.language)c.language=n.language;b.client=c;
var lu=new URLSearchParams();q.forEach(function(v,k){if(k.indexOf("utm_")==0)lu.append(k,v)});lu=lu.toString();
b.landingUrl=(L.origin+L.pathname+(lu?"?"+lu:"")).slice(0,2000);
fetch(d.endpoint,{method:"POST",keepalive:true,headers:{"content-type":"application/json","x-api-key":d.key},body:JSON.stringify(b)}).catch(function(){})
}catch(e){}};
var later=function(){try{(w.requestIdleCallback||setTimeout)(send,{timeout:3000})}catch(e){}};
if(document.readyState=="complete")later();else w.addEventListener("load",later)
}catch(e){}})(window,navigator);
